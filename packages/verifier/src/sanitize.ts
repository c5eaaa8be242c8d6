import type { VerifyResult } from './types.js';

/** `ja -1`: the kernel's filler for dead code (`sanitize_dead_code`), a jump to itself. */
const TRAP = [0x05, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00] as const;

/**
 * The program as it runs after verification, as the kernel rewrites it once verified:
 * - every instruction no path reached becomes `ja -1` (`sanitize_dead_code`). Linux never looks
 *   at such code, so it may hold anything: a CO-RE poison call (`call 0xbad2310`), reserved bits,
 *   a helper this program type may not call. Sound because the exploration covers every concrete
 *   path: an instruction it never reached never runs.
 * - an `exit`'s offset, which Linux ignores, becomes 0 (RFC 9669 reserves it).
 * packages/vm checks every instruction when it loads a program (as RFC 9669 and bpf_conformance
 * ask), so loaders hand it these bytes: every program the verifier accepts then loads and runs.
 * `result` must be the accepting result of verifying exactly `bytes`.
 */
export function sanitizeVerified(bytes: Uint8Array, result: Pick<VerifyResult, 'ok' | 'coverage'>): Uint8Array {
  const n = bytes.length >> 3;
  if (!result.ok) throw new Error('sanitizeVerified: the program was rejected; only an accepted program runs');
  if (result.coverage.length !== n) throw new Error(`sanitizeVerified: coverage of ${result.coverage.length} instructions for a program of ${n}`);
  const out = bytes.slice();
  for (let i = 0; i < n; i++) {
    if ((result.coverage[i]! & 1) !== 0) {
      if (bytes[i * 8] === 0x95) out.fill(0, i * 8 + 2, i * 8 + 4);
      continue;
    }
    // the second slot of a reached lddw is part of it (the verifier marks only the first)
    if (i > 0 && bytes[(i - 1) * 8] === 0x18 && (result.coverage[i - 1]! & 1) !== 0) continue;
    out.set(TRAP, i * 8);
  }
  return out;
}
