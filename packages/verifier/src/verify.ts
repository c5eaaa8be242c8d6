// The verifier's entry: one run of the abstract interpreter (verifier.ts, its check families
// under check/), started again when a prune relied on a value a branch found later decides, and
// an exact run when callback-loop widening lost a value the program needs.
//
// Where the code lives: verifier.ts (the driver loop: explore, step, registers, log), state.ts
// (the abstract state), exploration.ts (paths, checkpoints), limits.ts (the kernel's limits),
// check/alu.ts, check/memory.ts, check/stack.ts, check/helpers.ts, check/calls.ts,
// check/references.ts, check/branches.ts, check/pruning.ts (the check families).

import { Restart } from './exploration.js';
import { type Program, decodeProgram } from './program.js';
import type { VerifyOptions, VerifyResult } from './types.js';
import { Verifier } from './verifier.js';

export { DEFAULT_INSN_LIMIT, MAX_CALL_FRAMES, MAX_STACK_BYTES, PERF_MAX_TRACE_SIZE } from './limits.js';

/**
 * Verifies a program as the kernel would load it (`BPF_PROG_TYPE_TRACEPOINT` by default; see
 * `VerifyOptions.context` for XDP and raw contexts). Never throws for
 * a rejected program (that is `ok: false` with a diagnostic); throws {@link VerifierError} only
 * for input that is not a program at all (truncated bytes, no instructions, over 1M instructions).
 */
export function verify(program: Uint8Array | Program, options: VerifyOptions = {}): VerifyResult {
  const p = program instanceof Uint8Array ? decodeProgram(program) : program;
  const started = Date.now();
  const usePrecision = options.precision ?? true;
  // the conditional jumps found decided so far (see `Verifier.decide`): shared by the runs
  const decided = new Uint8Array(p.length);
  let first: Verifier;
  let result: VerifyResult;
  for (let restarts = 0; ; restarts++) {
    // a program that keeps finding new decided branches after pruning on precision: every
    // conditional jump a decision (the static analysis alone, always sound)
    if (restarts === MAX_PRECISION_RESTARTS) decided.fill(1);
    first = new Verifier(p, options, usePrecision, decided, started);
    try {
      result = first.run();
      break;
    } catch (e) {
      if (!(e instanceof Restart)) throw e;
    }
  }
  if (result.ok || first.widenings === 0) return result;
  // widening lost a value the program needs exactly: the exact exploration decides
  const exact = new Verifier(p, options, false, decided, started).run();
  return exact.ok ? exact : result;
}

/** Runs started again because a prune relied on a value a branch found later turned out to decide. */
const MAX_PRECISION_RESTARTS = 32;
