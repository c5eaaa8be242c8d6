// "Every program it accepts must also run in packages/vm without a fault": the accepted tracepoint
// programs of programs.ts, and mutations of them, go through the verifier and, when accepted,
// sanitized as the kernel does (code no path reaches becomes `ja -1`), through packages/vm's
// loader and both of its tiers over random records. (The kernel fuzz,
// `pnpm --filter @probeyard/verifier fuzz:kernel`, does the same on 10,000 programs a run.)
import { createMap, loadProgram, type MapType, RunStatus, Vm, type VmTier } from '@probeyard/vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type MapDef, sanitizeVerified, type VerifyResult, verify } from '../src/index.js';
import { ACCEPTED } from './programs.js';
import { asm } from './support.js';

// Tracepoint programs whose context is the raw record (an `event` gives a layout the VM does not
// need: it runs on the record's bytes either way).
const seeds = ACCEPTED.filter((c) => !c.xdp && !c.socketFilter && !c.notKernel && !c.options).map((c) => ({ name: c.name, ...asm(c.source) }));
/** Seeds that run without a fault (a ctx read at a negative offset is accepted as Linux does, and faults). */
const runnable = seeds.filter((s) => verify(s.bytes, { maps: s.maps }).warnings.length === 0);

/** Loads `bytes` (sanitized by `verified`) and runs it on a tier over 3 random records; the fault or load refusal, or undefined. */
function runInVm(bytes: Uint8Array, verified: VerifyResult, maps: readonly MapDef[], tier: VmTier, seed: number): string | undefined {
  bytes = sanitizeVerified(bytes, verified);
  const vm = new Vm({
    tier,
    maps: maps.map((m, i) => createMap({ name: `m${i}`, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, flags: 0 })),
  });
  const loaded = loadProgram(bytes, vm.loadOptions('accepted'));
  if (!loaded.ok) return `refused at load: ${loaded.diagnostics.map((d) => `${d.insnIndex}: ${d.message}`).join('; ')}`;
  // a tracepoint context may be read anywhere in [8, 8192): a record that big, random bytes
  const record = new Uint8Array(8192);
  let x = seed | 1;
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < record.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      record[i] = x & 0xff;
    }
    const status = vm.run(loaded.program, record);
    if (status !== RunStatus.ok && status !== RunStatus.budgetExhausted) return `${tier}: ${vm.fault?.message ?? `status ${status}`}`;
  }
  return undefined;
}

describe('programs the verifier accepts run in packages/vm', () => {
  it.each(seeds.map((s) => [s.name, s] as const))('%s', (_, s) => {
    const r = verify(s.bytes, { maps: s.maps });
    expect(r.ok).toBe(true);
    // a ctx read at a negative offset (accepted as Linux does; see VerifyResult.warnings) faults in the VM
    const faults = r.warnings.length > 0;
    for (const tier of ['interpreter', 'compiled'] as const) {
      const problem = runInVm(s.bytes, r, s.maps, tier, 7);
      if (faults) expect(problem).toMatch(/./);
      else expect(problem).toBeUndefined();
    }
  });

  it('mutated programs (immediates, offsets, registers, jump kinds): every accepted one loads and runs on both tiers', () => {
    let accepted = 0;
    const mutation = fc.record({
      at: fc.nat(),
      kind: fc.integer({ min: 0, max: 3 }),
      imm: fc.constantFrom(0, 1, -1, 4, 8, 16, 64, 255, 512, -8, -512, 0x7fffffff),
      off: fc.constantFrom(0, 1, -1, 2, 4, 8, -8, -16, -512, 0x7fff),
      regs: fc.integer({ min: 0, max: 0xaa }),
      jmp: fc.constantFrom(1, 2, 3, 5, 0xa, 0xb),
    });
    fc.assert(
      fc.property(fc.nat({ max: seeds.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.nat(), (which, muts, seed) => {
        const s = seeds[which]!;
        const bytes = s.bytes.slice();
        const view = new DataView(bytes.buffer);
        for (const m of muts) {
          const at = (m.at % (bytes.length / 8)) * 8;
          if (at > 0 && bytes[at - 8] === 0x18) continue; // keep lddw halves whole
          if (m.kind === 0) view.setInt32(at + 4, m.imm, true);
          else if (m.kind === 1) view.setInt16(at + 2, m.off, true);
          else if (m.kind === 2) bytes[at + 1] = m.regs;
          else {
            const op = bytes[at]!;
            if ((op & 7) === 5 && op !== 0x85 && op !== 0x95) bytes[at] = (m.jmp << 4) | (op & 0x0f);
          }
        }
        const r = verify(bytes, { maps: s.maps, insnLimit: 100_000 });
        if (!r.ok) return;
        // a ctx read at a negative offset: accepted as Linux accepts it, but the VM faults it
        // (`VerifyResult.warnings` says so); nothing else may fault
        if (r.warnings.length > 0) {
          expect(r.warnings.map((w) => w.message).join('\n')).toMatch(/^ctx read at negative offset/);
          return;
        }
        accepted++;
        for (const tier of ['interpreter', 'compiled'] as const) {
          const problem = runInVm(bytes, r, s.maps, tier, seed);
          if (problem !== undefined) throw new Error(`${s.name} mutated to ${Buffer.from(bytes).toString('hex')}: ${problem}`);
        }
      }),
      { numRuns: 1500, seed: 20261130 },
    );
    // the property is not vacuous: a good share of the mutations stay acceptable
    expect(accepted).toBeGreaterThan(150);
  });

  it('an instruction with random fields on a path never taken: accepted as Linux does, and runs once sanitized', () => {
    // `r9 = 0; if r9 == 0 goto +1; <insn>` before a seed: Linux never explores <insn>; its static
    // checks (unknown opcodes, a load's reserved fields, lddw) still refuse some
    const opcodes = [0x07, 0x0f, 0x17, 0x2f, 0x37, 0x3f, 0x67, 0x77, 0x84, 0x87, 0xb4, 0xb7, 0xbf, 0xbc, 0xd4, 0xdc, 0x05, 0x06, 0x15, 0x1d, 0x16, 0x61, 0x69, 0x71, 0x79, 0x62, 0x63, 0x6b, 0x72, 0x7a, 0x7b, 0xc3, 0xdb, 0x85, 0x95];
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: runnable.length - 1 }),
        fc.constantFrom(...opcodes),
        fc.integer({ min: 0, max: 0xff }),
        fc.constantFrom(0, 0, 1, -1, 8, 0x7fff),
        fc.constantFrom(0, 0, 1, 16, -1, 0x10000),
        (which, opcode, regs, off, imm) => {
          const s = runnable[which]!;
          const bytes = new Uint8Array(s.bytes.length + 24);
          const view = new DataView(bytes.buffer);
          bytes.set([0xb7, 0x09, 0, 0, 0, 0, 0, 0, 0x15, 0x09, 1, 0, 0, 0, 0, 0, opcode, regs]);
          view.setInt16(18, off, true);
          view.setInt32(20, imm, true);
          bytes.set(s.bytes, 24);
          const r = verify(bytes, { maps: s.maps, insnLimit: 100_000 });
          if (!r.ok) {
            refused++;
            return;
          }
          accepted++;
          expect(r.coverage[2]! & 1).toBe(0);
          for (const tier of ['interpreter', 'compiled'] as const) {
            const problem = runInVm(bytes, r, s.maps, tier, which);
            if (problem !== undefined) throw new Error(`${s.name} behind ${Buffer.from(bytes.subarray(16, 24)).toString('hex')}: ${problem}`);
          }
        },
      ),
      { numRuns: 600, seed: 20261130 },
    );
    expect(accepted).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(50);
  });

  it.each([
    // r0 = 0; if r0 == 0 goto +1; <dead>; exit
    ['exit with imm 16', 'b700000000000000 1500010000000000 9500000010000000 9500000000000000', [2]],
    ['a write to r10', 'b700000000000000 1500010000000000 b70a000000000000 9500000000000000', [2]],
    ['bpf_probe_write_user (not for tracepoint programs)', 'b700000000000000 1500010000000000 8500000024000000 9500000000000000', [2]],
    ['a CO-RE poison call (call 0xbad2310)', 'b700000000000000 1500010000000000 850000001023ad0b 9500000000000000', [2]],
    ['an lddw of a map that does not exist... as a plain constant', 'b700000000000000 1500020000000000 1801000000000000 0000000000000000 9500000000000000', [2, 3]],
    // r2 = a callback nothing calls (its exit has imm 16); r0 = 0; exit
    ['a callback never called', '1842000003000000 0000000000000000 b700000000000000 9500000000000000 b700000000000000 9500000010000000', [4, 5]],
  ])('dead code Linux accepts (%s) becomes ja -1 and runs', (_, text, dead) => {
    const bytes = new Uint8Array(Buffer.from(text.replace(/ /g, ''), 'hex'));
    const r = verify(bytes);
    expect(r.diagnostics).toEqual([]);
    const sanitized = sanitizeVerified(bytes, r);
    for (let i = 0; i < bytes.length / 8; i++) {
      const slot = Buffer.from(sanitized.subarray(i * 8, i * 8 + 8)).toString('hex');
      expect(slot).toBe(dead.includes(i) ? '0500ffff00000000' : Buffer.from(bytes.subarray(i * 8, i * 8 + 8)).toString('hex'));
    }
    for (const tier of ['interpreter', 'compiled'] as const) expect(runInVm(bytes, r, [], tier, 1)).toBeUndefined();
  });

  it('an exit with an offset is accepted (Linux ignores the field) and runs with offset 0 (RFC 9669 reserves it)', () => {
    // r0 = 0; if r0 == 0 goto +1; exit (offset 7, never reached); exit (offset 1)
    const bytes = new Uint8Array(Buffer.from('b700000000000000 1500010000000000 9500070000000000 9500010000000000'.replace(/ /g, ''), 'hex'));
    const r = verify(bytes);
    expect(r.diagnostics).toEqual([]);
    const sanitized = Buffer.from(sanitizeVerified(bytes, r)).toString('hex');
    expect(sanitized).toBe('b700000000000000 1500010000000000 0500ffff00000000 9500000000000000'.replace(/ /g, ''));
    expect(loadProgram(bytes, new Vm().loadOptions()).ok).toBe(false); // the raw bytes: refused, as bpf_conformance requires
    for (const tier of ['interpreter', 'compiled'] as const) expect(runInVm(bytes, r, [], tier, 1)).toBeUndefined();
  });

  it('refuses to sanitize a rejected program, or coverage of another program', () => {
    const bytes = new Uint8Array(Buffer.from('b7000000000000009500000000000000', 'hex')); // r0 = 0; exit
    const r = verify(new Uint8Array(Buffer.from('79000000000000009500000000000000', 'hex'))); // r0 = *(u64 *)(r0 + 0): R0 !read_ok
    expect(r.ok).toBe(false);
    expect(() => sanitizeVerified(bytes, r)).toThrow(/rejected/);
    const ok = verify(bytes);
    expect(() => sanitizeVerified(new Uint8Array(24), ok)).toThrow(/coverage of 2 instructions for a program of 3/);
  });
});
