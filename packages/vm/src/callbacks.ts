import { FUNC_REGION } from './address.js';
import { HelperId } from './helper-ids.js';
import { InternalOp, type LoadedProgram } from './program.js';

const cache = new WeakMap<LoadedProgram, readonly number[]>();

/**
 * The instruction indexes a `bpf_loop` of `program` may call back, ascending: every `lddw` whose
 * value is a callback address (high half {@link FUNC_REGION}: a `BPF_PSEUDO_FUNC` load, or a
 * plain constant that spells one) naming an instruction start of the program. A callback address
 * made any other way (arithmetic on one) is refused by `bpf_loop` on both tiers: the compiled tier
 * has a wasm function for each of these entries and no other, so the interpreter refuses the same.
 */
export function callbackEntries(program: LoadedProgram): readonly number[] {
  const known = cache.get(program);
  if (known !== undefined) return known;
  const { op, imm, immHi, length: n } = program;
  const found = new Set<number>();
  for (let i = 0; i < n; i++) {
    if (op[i] !== InternalOp.loadImm64) continue;
    const t = imm[i] as number;
    if (immHi[i] === FUNC_REGION && t >= 0 && t < n && op[t] !== InternalOp.lddwTail) found.add(t);
    i++;
  }
  const entries = [...found].sort((a, b) => a - b);
  cache.set(program, entries);
  return entries;
}

/** Whether `pc` is one of {@link callbackEntries} of `program`. */
export function isCallbackEntry(program: LoadedProgram, pc: number): boolean {
  return callbackEntries(program).includes(pc);
}

/** Whether `program` may call `bpf_loop`: by id, or through a `callx` of a register. */
export function mayCallLoop(program: LoadedProgram): boolean {
  if (program.helpers.has(HelperId.loop)) return true;
  for (let i = 0; i < program.length; i++) if (program.op[i] === InternalOp.callReg) return true;
  return false;
}
