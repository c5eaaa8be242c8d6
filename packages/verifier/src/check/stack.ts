// Stack (`check_stack_read`/`check_stack_write`, `check_max_stack_depth`): spills and fills,
// per-byte initialisation, variable-offset accesses and the combined depth of call chains.

import { MAX_STACK_BYTES } from '../limits.js';
import { Cls, Mode, cls, mode } from '../opcodes.js';
import { constValue, isConst, toSigned, truncate } from '../scalar.js';
import { Byte, EMPTY_SLOT, type Frame, type Reg, RegType, type Slot, type State, UNKNOWN_SCALAR_SIZED, constReg, isPointer, scalarReg } from '../state.js';
import { formatTnum } from '../tnum.js';
import type { Verifier } from '../verifier.js';

export function stackAccess(
  this: Verifier,
  s: State,
  i: number,
  regNo: number,
  base: Reg,
  insnOff: number,
  size: number,
  kind: 'read' | 'write',
  value: Reg | null,
): Reg {
  const frame = s.frames[base.frame]!;
  const fixed = base.off + insnOff;
  const dir = kind === 'read' ? ' read from' : ' write to';
  if (!isConst(base.v)) {
    // variable offset: every byte it may touch must be inside the stack
    const lo = base.v.smin + BigInt(fixed);
    const hi = base.v.smax + BigInt(fixed);
    if (lo < -MAX_STACK_BYTES || hi + BigInt(size) > 0n) {
      this.reject(i, `invalid variable-offset${dir} stack R${regNo} var_off=${formatTnum(base.v.t)} off=${fixed} size=${size}`);
    }
    if (!this.privileged) this.reject(i, `R${regNo} variable stack access prohibited for !root, var_off=${formatTnum(base.v.t)} off=${fixed}`);
    this.noteStackDepth(s, base.frame, Number(lo));
    for (let a = Number(lo); a < Number(hi) + size; a++) {
      const { k, pos } = slotOf(a);
      const slot = frame.stack[k] ?? EMPTY_SLOT;
      if (kind === 'read') {
        const b = slot.bytes[pos]!;
        if (b === Byte.invalid && !this.allowUninitStack) {
          this.reject(i, `invalid variable-offset read from stack R${regNo} var_off=${formatTnum(base.v.t)} off=${fixed} size=${size}`);
        }
      } else {
        setByte(frame, k, pos, Byte.misc);
      }
    }
    return UNKNOWN_SCALAR_SIZED(size, kind);
  }
  const off = fixed + Number(toSigned(constValue(base.v), 64));
  if (off < -MAX_STACK_BYTES || off + size > 0) {
    this.reject(i, `invalid${dir} stack R${regNo} off=${off} size=${size}`);
  }
  if (off % size !== 0) {
    // the offset is constant here; Linux 6.18 prints a constant var_off as its value
    this.reject(i, `misaligned stack access off ${toSigned(constValue(base.v), 64)}+${base.off}+${insnOff} size ${size}`);
  }
  this.noteStackDepth(s, base.frame, off);
  const { k, pos } = slotOf(off);
  const slot = frame.stack[k] ?? EMPTY_SLOT;
  if (kind === 'write') {
    const v = value!;
    if (size === 8) {
      padStack(frame, k);
      frame.stack[k] = { bytes: SPILL_BYTES, spilled: v };
      return v;
    }
    if (isPointer(v)) this.reject(i, 'invalid size of register spill');
    const zero = v.type === RegType.scalar && isConst(v.v) && (constValue(v.v) & ((1n << BigInt(size * 8)) - 1n)) === 0n;
    const bytes = slot.spilled ? slot.bytes.map(() => Byte.misc as number) : slot.bytes.slice();
    for (let b = 0; b < size; b++) bytes[pos + b] = zero ? Byte.zero : Byte.misc;
    padStack(frame, k);
    // a constant (immediate or register) stored at the slot's lowest address: Linux spills it
    // as a narrow scalar (check_stack_write_fixed_off with bpf_capable), which a map lookup
    // takes as a constant key
    const op = this.p.opcode[i]!;
    const plain = cls(op) === Cls.ST || (cls(op) === Cls.STX && mode(op) === Mode.MEM);
    const narrow =
      this.privileged && pos === 0 && !zero && plain && v.type === RegType.scalar && isConst(v.v)
        ? { size, value: constValue(v.v) & ((1n << BigInt(size * 8)) - 1n) }
        : undefined;
    frame.stack[k] = narrow ? { bytes, spilled: null, narrow } : { bytes, spilled: null };
    return v;
  }
  if (slot.spilled) {
    if (size === 8) return slot.spilled;
    if (isPointer(slot.spilled)) this.reject(i, 'invalid size of register fill');
    if (pos === 0) return scalarReg(truncate(slot.spilled.v, size));
    return UNKNOWN_SCALAR_SIZED(size, kind);
  }
  let allZero = true;
  for (let b = 0; b < size; b++) {
    const t = slot.bytes[pos + b]!;
    if (t === Byte.invalid) {
      if (!this.allowUninitStack) this.reject(i, `invalid read from stack off ${off}+${b} size ${size}`);
      allZero = false;
    } else if (t !== Byte.zero) allZero = false;
  }
  return allZero ? constReg(0n) : UNKNOWN_SCALAR_SIZED(size, kind);
}

export function noteStackDepth(this: Verifier, s: State, frameNo: number, off: number): void {
  const f = s.frames[frameNo]!;
  const sub = this.cfg.subprogOf[f.subprogStart]!;
  if (-off > this.stackDepth[sub]!) this.stackDepth[sub] = -off;
}

/**
 * The combined stack of every call chain (`check_max_stack_depth`), each frame rounded up to 16
 * bytes as for a JIT-compiled program. Linux 6.13+ on x86-64 gives tracing programs a private
 * stack and skips this limit; `privateStack: true` does the same.
 */
export function checkStackDepth(this: Verifier): void {
  if (this.options.privateStack) return;
  const round = (d: number) => Math.ceil(d / 16) * 16;
  const walk = (sub: number, depth: number, total: number, callInsn: number): void => {
    const t = total + round(this.stackDepth[sub]!);
    if (t > MAX_STACK_BYTES) {
      this.reject(callInsn, `combined stack size of ${depth} calls is ${t}. Too large`);
    }
    for (const c of this.cfg.calls[sub]!) walk(c.callee, depth + 1, t, c.insnIndex);
  };
  walk(0, 1, 0, 0);
}

/** Slot and byte position (lowest address first) of stack byte `a` (negative). */
export function slotOf(a: number): { k: number; pos: number } {
  const k = Math.floor((-a - 1) / 8);
  return { k, pos: a + 8 * (k + 1) };
}

export function setByte(frame: Frame, k: number, pos: number, kind: number): void {
  const slot: Slot = frame.stack[k] ?? EMPTY_SLOT;
  const bytes = slot.spilled ? slot.bytes.map(() => Byte.misc as number) : slot.bytes.slice();
  bytes[pos] = kind;
  padStack(frame, k);
  frame.stack[k] = { bytes, spilled: null };
}

const SPILL_BYTES: readonly number[] = [1, 1, 1, 1, 1, 1, 1, 1];

function padStack(frame: Frame, k: number): void {
  while (frame.stack.length < k) frame.stack.push(EMPTY_SLOT);
}

/** The stack family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const stackChecks = { stackAccess, noteStackDepth, checkStackDepth };
