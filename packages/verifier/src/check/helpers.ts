// Helpers and arguments (`check_helper_call`, `check_func_arg`, `check_helper_mem_access`): each
// argument checked against the helper's prototype, memory passed to a helper, the result typed.

import { setByte, slotOf } from './stack.js';
import { Arg, type HelperProto, Ret, helperName, helperProto, mapTypeAllowsHelper } from '../helper-protos.js';
import { MAX_STACK_BYTES, MAX_VAR_SIZE } from '../limits.js';
import { constValue, isConst, toSigned } from '../scalar.js';
import { Byte, EMPTY_SLOT, NOT_INIT, type Reg, RegType, type State, UNKNOWN_SCALAR, ZERO_OFFSET, cloneState, constReg, pointerReg, regTypeName } from '../state.js';
import { U64, formatTnum } from '../tnum.js';
import { type MapDef, MapType } from '../types.js';
import type { Verifier } from '../verifier.js';

export function callHelper(this: Verifier, s: State, i: number): number {
  const id = this.p.imm[i]!;
  const proto = helperProto(id);
  if (!proto) this.reject(i, `invalid func unknown#${id}`);
  const regs = this.regs(s);
  // a probe read from a plain number: kernel or user memory, not the record, stack or a map value
  if (PROBE_READS.has(id) && regs[3]?.type === RegType.scalar) this.outsideReads.set(i, id);
  let map: MapDef | null = null;
  let mapIndex = -1;
  let allocSize = 0;
  let released = 0;
  let refArg = 0;
  let constKey: bigint | null = null;
  let callback = -1;
  let callbackCtx: Reg | null = null;
  for (let a = 0; a < proto.args.length; a++) {
    const r = a + 1;
    const kind = proto.args[a]!;
    if (kind === Arg.size || kind === Arg.sizeOrZero) continue; // checked with the memory before it
    const reg = this.readReg(s, i, r);
    if (reg.refId) {
      if (refArg) this.reject(i, `more than one arg with ref_obj_id R${r} ${reg.refId} ${refArg}`);
      refArg = reg.refId;
    }
    switch (kind) {
      case Arg.anything:
        break;
      case Arg.mapPtr: {
        if (reg.type !== RegType.mapPtr) this.typeMismatch(i, r, reg, 'map_ptr');
        map = this.mapDef(reg.aux, i);
        mapIndex = reg.aux;
        break;
      }
      case Arg.mapKey:
      case Arg.mapValue:
      case Arg.uninitMapValue: {
        if (!map) this.reject(i, `invalid map_ptr to access map->${kind === Arg.mapKey ? 'key' : 'value'}`);
        const size = kind === Arg.mapKey ? map.keySize : map.valueSize;
        if (size === 0) this.reject(i, 'invalid zero-sized read');
        if (kind === Arg.mapKey) constKey = this.constantStackKey(s, reg, size);
        this.helperMem(s, i, r, reg, BigInt(size), BigInt(size), kind === Arg.uninitMapValue ? 'write' : 'read', proto);
        break;
      }
      case Arg.mem:
      case Arg.uninitMem: {
        const sizeKind = proto.args[a + 1]!;
        const sizeReg = this.readReg(s, i, r + 1);
        if (sizeReg.type !== RegType.scalar) this.typeMismatch(i, r + 1, sizeReg, 'scalar');
        const sv = sizeReg.v;
        if (sv.smin < 0n) {
          this.reject(i, `R${r + 1} min value is negative, either use unsigned or 'var &= const'`);
        }
        if (sv.umax === 0n && sizeKind === Arg.size) this.reject(i, `invalid zero-sized read`);
        if (sv.umax >= MAX_VAR_SIZE) {
          this.reject(i, `R${r + 1} unbounded memory access, use 'var &= const' or 'if (var < const)'`);
        }
        this.helperMem(s, i, r, reg, sv.umin, sv.umax, kind === Arg.uninitMem ? 'write' : 'read', proto);
        break;
      }
      case Arg.allocSize: {
        if (reg.type !== RegType.scalar) this.typeMismatch(i, r, reg, 'scalar');
        if (!isConst(reg.v)) this.reject(i, `R${r} is not a known constant'`);
        allocSize = Number(constValue(reg.v) & 0xffffffffn);
        break;
      }
      case Arg.ctx: {
        if (reg.type !== RegType.ctx) this.typeMismatch(i, r, reg, 'ctx');
        if (reg.off !== 0 || !isConst(reg.v) || constValue(reg.v) !== 0n) {
          this.reject(i, `dereference of modified ctx ptr R${r} off=${reg.off} disallowed`);
        }
        break;
      }
      case Arg.func: {
        if (reg.type !== RegType.func) this.typeMismatch(i, r, reg, 'func');
        callback = reg.aux;
        break;
      }
      case Arg.stackOrNull: {
        const isNull = reg.type === RegType.scalar && isConst(reg.v) && constValue(reg.v) === 0n;
        if (!isNull && reg.type !== RegType.stack) this.typeMismatch(i, r, reg, 'fp');
        callbackCtx = reg;
        break;
      }
      case Arg.releaseRingbuf: {
        released = this.releaseArg(s, i, r, reg);
        break;
      }
    }
  }
  if (map && ((proto.mapTypes && !proto.mapTypes.includes(map.type)) || !mapTypeAllowsHelper(map.type, id))) {
    this.reject(i, `cannot pass map_type ${map.type} into func ${helperName(id)}#${id}`);
  }
  if (released) this.releaseRef(s, released);
  const nrLoops = regs[1]!;
  for (let r = 1; r <= 5; r++) regs[r] = NOT_INIT;
  regs[0] = this.helperResult(s, i, proto, mapIndex, allocSize, constKey);
  if (callback < 0) return i + 1;
  // Linux explores the callback only while its depth is below nr_loops' maximum
  // (`callback_depth < umax_value`): never when nr_loops is 0
  if (nrLoops.type === RegType.scalar && nrLoops.v.umax === 0n) return i + 1;
  // nr_loops may be 0: the path where the callback never runs
  this.pendingPaths.push({ state: cloneState(s), insnIndex: i + 1, checkpoint: null });
  const maxLoops = nrLoops.type === RegType.scalar ? nrLoops.v.umax : U64;
  return this.enterCallback(s, i, callback, callbackCtx ?? constReg(0n), maxLoops - 1n);
}

export function helperResult(
  this: Verifier,
  s: State,
  i: number,
  proto: HelperProto,
  mapIndex: number,
  allocSize: number,
  constKey: bigint | null,
): Reg {
  switch (proto.ret) {
    case Ret.integer:
      return UNKNOWN_SCALAR;
    case Ret.void:
      return NOT_INIT;
    case Ret.mapValueOrNull: {
      // an array lookup with a constant key below max_entries cannot fail
      if (proto.id === 1 && constKey !== null) {
        const def = this.mapDef(mapIndex, i);
        if (def.type === MapType.array || def.type === MapType.percpuArray) {
          // the key's value decided the result: it is precise (`get_constant_map_key`)
          this.decide(i);
          if (constKey < BigInt(def.maxEntries)) return pointerReg(RegType.mapValue, { aux: mapIndex, v: ZERO_OFFSET });
        }
      }
      return pointerReg(RegType.mapValue, { maybeNull: true, id: this.newId(), aux: mapIndex, v: ZERO_OFFSET });
    }
    case Ret.ringbufMemOrNull:
      return this.acquireRingbufRef(s, i, allocSize);
  }
}

/** The key a stack pointer points to when its bytes are a known constant (`get_constant_map_key`). */
export function constantStackKey(this: Verifier, s: State, reg: Reg, size: number): bigint | null {
  if (reg.type !== RegType.stack || !isConst(reg.v) || (size !== 4 && size !== 8)) return null;
  const off = reg.off + Number(toSigned(constValue(reg.v), 64));
  if (off < -MAX_STACK_BYTES || off + size > 0 || off % size !== 0) return null;
  const { k, pos } = slotOf(off);
  const slot = s.frames[reg.frame]!.stack[k];
  if (!slot) return null;
  if (slot.spilled) {
    const v = slot.spilled;
    if (pos !== 0 || v.type !== RegType.scalar || !isConst(v.v)) return null;
    return size === 8 ? constValue(v.v) : constValue(v.v) & 0xffffffffn;
  }
  if (slot.narrow && pos === 0 && slot.narrow.size === size) return slot.narrow.value;
  for (let b = 0; b < size; b++) if (slot.bytes[pos + b] !== Byte.zero) return null;
  return 0n;
}

export function typeMismatch(this: Verifier, i: number, r: number, reg: Reg, expected: string): never {
  this.reject(i, `R${r} type=${regTypeName(reg)} expected=${expected}`);
}

/**
 * Memory passed to a helper (`check_helper_mem_access`): `[minSize, maxSize]` bytes read or
 * written through register r.
 */
export function helperMem(
  this: Verifier,
  s: State,
  i: number,
  r: number,
  reg: Reg,
  minSize: bigint,
  maxSize: bigint,
  kind: 'read' | 'write',
  proto: HelperProto,
): void {
  void minSize;
  const size = Number(maxSize);
  switch (reg.type) {
    case RegType.packet:
    case RegType.packetMeta:
      if (!proto.pktAccess) this.reject(i, 'helper access to the packet is not allowed');
      this.packetAccess(i, r, reg, 0, size);
      return;
    case RegType.stack: {
      if (reg.maybeNull) break;
      const frame = s.frames[reg.frame]!;
      const lo = reg.v.smin + BigInt(reg.off);
      const hi = reg.v.smax + BigInt(reg.off);
      if (lo < -MAX_STACK_BYTES || hi + BigInt(size) > 0n || (size === 0 && hi > 0n)) {
        const shown = isConst(reg.v) ? `off=${Number(lo)}` : `var_off=${formatTnum(reg.v.t)} off=${reg.off}`;
        this.reject(i, `invalid ${kind === 'write' ? 'write to' : 'read from'} stack R${r} ${shown} size=${size}`);
      }
      if (size === 0) return;
      this.noteStackDepth(s, reg.frame, Number(lo));
      for (let a = Number(lo); a < Number(hi) + size; a++) {
        const { k, pos } = slotOf(a);
        const slot = frame.stack[k] ?? EMPTY_SLOT;
        if (kind === 'read') {
          if (slot.bytes[pos] === Byte.invalid && !this.allowUninitStack) {
            this.reject(i, `invalid read from stack R${r} off ${Number(lo)}+${a - Number(lo)} size ${size}`);
          }
        } else if (isConst(reg.v)) {
          setByte(frame, k, pos, Byte.misc);
        } else if (slot.spilled || slot.bytes[pos] === Byte.invalid) {
          setByte(frame, k, pos, Byte.misc);
        }
      }
      return;
    }
    case RegType.mapValue:
      if (reg.maybeNull) break;
      if (size === 0) return;
      this.regionAccess(i, r, reg, 0, size, this.mapDef(reg.aux, i).valueSize, 'map value, value_size');
      return;
    case RegType.ringbufMem:
      if (reg.maybeNull) break;
      if (size === 0) return;
      this.regionAccess(i, r, reg, 0, size, reg.aux, 'memory, mem_size');
      return;
  }
  this.typeMismatch(i, r, reg, 'fp, map_value, ringbuf_mem');
}

/** probe_read, probe_read_str, probe_read_user(_str), probe_read_kernel(_str). */
const PROBE_READS = new Set([4, 45, 112, 113, 114, 115]);

/** The helpers family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const helpersChecks = { callHelper, helperResult, constantStackKey, typeMismatch, helperMem };
