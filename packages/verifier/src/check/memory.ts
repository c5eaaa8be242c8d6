// Memory and context access (`check_mem_access`): loads, stores and atomics through ctx, map
// value, ring-buffer and packet pointers, with the tracepoint/XDP/raw context rules and the
// field-access report; the stack has its own file (stack.ts).

import { MAX_VAR_OFF, PERF_MAX_TRACE_SIZE, XDP_MD_SIZE } from '../limits.js';
import { Atomic, Cls, Mode, cls, mode, sizeBytes } from '../opcodes.js';
import { constValue, isConst, signExtend, toSigned, truncate } from '../scalar.js';
import { NOT_INIT, type Reg, RegType, type State, UNKNOWN_SCALAR, UNKNOWN_SCALAR_SIZED, constReg, isPacketPointer, isPointer, pointerReg, regTypeName, scalarReg } from '../state.js';
import { formatTnum } from '../tnum.js';
import type { Verifier } from '../verifier.js';

export function load(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const op = p.opcode[i]!;
  const size = sizeBytes(op);
  const base = this.readReg(s, i, p.src[i]!);
  const value = this.access(s, i, p.src[i]!, base, p.off[i]!, size, 'read', null);
  let v = value;
  if (mode(op) === Mode.MEMSX && v.type === RegType.scalar) v = scalarReg(signExtend(v.v, (size * 8) as 8 | 16 | 32));
  this.writeReg(s, i, p.dst[i]!, v);
}

export function store(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const op = p.opcode[i]!;
  const size = sizeBytes(op);
  const base = this.readReg(s, i, p.dst[i]!);
  let value: Reg;
  if (cls(op) === Cls.STX) value = this.readReg(s, i, p.src[i]!);
  else value = this.immReg(i, false);
  if (!this.privileged && isPointer(value) && base.type !== RegType.stack) {
    this.reject(i, `R${p.src[i]} leaks addr into mem`);
  }
  this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'write', value);
}

export function atomic(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const op = p.opcode[i]!;
  const size = sizeBytes(op);
  const imm = p.imm[i]!;
  const base = this.readReg(s, i, p.dst[i]!);
  const value = this.readReg(s, i, p.src[i]!);
  if (imm === Atomic.CMPXCHG) this.readReg(s, i, 0);
  if (isPointer(value)) this.reject(i, `R${p.src[i]} leaks addr into mem`);
  if (base.type === RegType.ctx || isPacketPointer(base)) {
    this.reject(i, `BPF_ATOMIC stores into R${p.dst[i]} ${regTypeName(base)} is not allowed`);
  }
  const old = this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'read', null);
  this.access(s, i, p.dst[i]!, base, p.off[i]!, size, 'write', UNKNOWN_SCALAR);
  const fetched = old.type === RegType.scalar ? scalarReg(truncate(old.v, size)) : UNKNOWN_SCALAR;
  if (imm === Atomic.CMPXCHG) this.regs(s)[0] = fetched;
  else if (imm & Atomic.FETCH) this.writeReg(s, i, p.src[i]!, fetched);
}

/**
 * Checks one memory access through register `regNo` (`check_mem_access`) and performs it on the
 * state. Returns the loaded value for reads.
 */
export function access(
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
  if (base.type === RegType.scalar || base.type === RegType.mapPtr || base.type === RegType.func || base.maybeNull) {
    this.reject(i, `R${regNo} invalid mem access '${regTypeName(base)}'`);
  }
  switch (base.type) {
    case RegType.ctx:
      return this.ctxAccess(i, regNo, base, insnOff, size, kind);
    case RegType.stack:
      return this.stackAccess(s, i, regNo, base, insnOff, size, kind, value);
    case RegType.mapValue: {
      const def = this.mapDef(base.aux, i);
      if (kind === 'write' && def.readonly) {
        this.reject(i, `write into map forbidden, value_size=${def.valueSize} off=${base.off + insnOff} size=${size}`);
      }
      this.regionAccess(i, regNo, base, insnOff, size, def.valueSize, 'map value, value_size');
      // a frozen read-only map (libbpf's .rodata): a load at a known offset is a known
      // constant (check_mem_access → bpf_map_direct_read), so disabled options prune
      if (kind === 'read' && def.frozen !== undefined && isConst(base.v) && size <= 8) {
        const at = base.off + insnOff + Number(constValue(base.v));
        if (at >= 0 && at + size <= def.frozen.length) {
          let v = 0n;
          for (let b = size - 1; b >= 0; b--) v = (v << 8n) | BigInt(def.frozen[at + b]!);
          return constReg(v);
        }
      }
      return UNKNOWN_SCALAR_SIZED(size, kind);
    }
    case RegType.ringbufMem:
      this.regionAccess(i, regNo, base, insnOff, size, base.aux, 'memory, mem_size');
      return UNKNOWN_SCALAR_SIZED(size, kind);
    case RegType.packet:
    case RegType.packetMeta:
      this.packetAccess(i, regNo, base, insnOff, size);
      return UNKNOWN_SCALAR_SIZED(size, kind);
  }
  this.reject(i, `R${regNo} invalid mem access '${regTypeName(base)}'`);
}

/**
 * An access through a packet pointer (`check_packet_access`): only the fixed offset is checked,
 * against the range proven for this pointer's variable part by a comparison with pkt_end.
 */
export function packetAccess(this: Verifier, i: number, regNo: number, base: Reg, insnOff: number, size: number): void {
  if (base.v.smin < 0n) {
    this.reject(i, `R${regNo} min value is negative, either use unsigned index or do a if (index >=0) check.`);
  }
  const off = base.off + insnOff;
  if (off < 0 || off + size > base.aux) this.reject(i, `R${regNo} offset is outside of the packet`);
}

/** Bounds of an access to a region of `limit` bytes (`check_mem_region_access`). */
export function regionAccess(this: Verifier, i: number, regNo: number, base: Reg, insnOff: number, size: number, limit: number, what: string): void {
  const off = BigInt(base.off + insnOff);
  const v = base.v;
  if (v.smin < 0n && (v.smin + off < 0n || v.smin <= -(1n << 62n))) {
    this.reject(i, `R${regNo} min value is negative, either use unsigned index or do a if (index >=0) check.`);
  }
  const lo = v.smin + off;
  if (lo < 0n || lo + BigInt(size) > BigInt(limit)) {
    this.reject(i, `invalid access to ${what}=${limit} off=${lo} size=${size}`);
  }
  if (v.umax >= MAX_VAR_OFF) {
    this.reject(i, `R${regNo} unbounded memory access, make sure to bounds check any such access`);
  }
  const hi = v.umax + off;
  if (hi + BigInt(size) > BigInt(limit)) {
    this.reject(i, `invalid access to ${what}=${limit} off=${hi} size=${size}`);
  }
}

export function ctxAccess(this: Verifier, i: number, regNo: number, base: Reg, insnOff: number, size: number, kind: 'read' | 'write'): Reg {
  if (!isConst(base.v)) {
    this.reject(i, `variable ctx access var_off=${formatTnum(base.v.t)} disallowed`);
  }
  const varOff = Number(toSigned(constValue(base.v), 64));
  if (base.off !== 0 || varOff !== 0) {
    this.reject(i, `dereference of modified ctx ptr R${regNo} off=${base.off + varOff} disallowed`);
  }
  const off = insnOff;
  const ctx = this.context;
  if (ctx.kind === 'xdp') {
    // xdp_is_valid_access: read-only, every field is a __u32; egress_ifindex (20) only for devmap programs
    if (kind === 'write' || off < 0 || off >= XDP_MD_SIZE || size !== 4 || off % size !== 0 || off === 20) this.invalidCtx(i, off, size);
    return this.packetSlotRead(off, { data: 0, dataEnd: 4, meta: 8 }) ?? UNKNOWN_SCALAR_SIZED(size, kind);
  }
  if (ctx.kind === 'raw') {
    if (off < 0 || off + size > ctx.size || (kind === 'write' && !ctx.writable)) this.invalidCtx(i, off, size);
    const slots = ctx.packet;
    if (slots) {
      const touches = [slots.data, slots.dataEnd, slots.meta].some((at) => at !== undefined && off < at + 4 && at < off + size);
      if (touches) {
        // the pointer fields are read whole and never written (the kernel converts the load)
        const ptr = kind === 'read' && size === 4 ? this.packetSlotRead(off, slots) : null;
        return ptr ?? this.invalidCtx(i, off, size);
      }
    }
    return UNKNOWN_SCALAR_SIZED(size, kind);
  }
  // tp_prog_is_valid_access: `off < sizeof(void *)` compares unsigned, so a negative offset
  // passes it (and `off >= PERF_MAX_TRACE_SIZE` signed); `off % size` is C's (truncating, as
  // JavaScript's): Linux 6.18 accepts `*(u32 *)(r1 - 16)`, so do we (it reads the bytes before
  // the record; packages/vm faults such a read)
  if (kind === 'write' || (off >= 0 && off < 8) || off >= PERF_MAX_TRACE_SIZE || off % size !== 0) {
    this.reject(i, `invalid bpf_context access off=${off} size=${size}`);
  }
  if (off < 0 && !ctx.event && !this.warnedAt.has(i)) {
    this.warnedAt.add(i);
    this.warnings.push(this.diagnostic(i, `ctx read at negative offset off=${off} size=${size}: Linux accepts it (before the record); packages/vm faults it`));
  }
  const event = ctx.event;
  if (event) {
    const name = `${event.system}/${event.name}`;
    if (off + size > event.fixedSize) {
      this.reject(i, `invalid bpf_context access off=${off} size=${size}: past the ${event.fixedSize}-byte record of ${name}`);
    }
    const fields = event.fields;
    const field = fields.find((f) => off >= f.byteOffset && off + size <= f.byteOffset + f.size);
    if (!field) {
      const touched = fields.filter((f) => off < f.byteOffset + f.size && f.byteOffset < off + size).map((f) => f.name);
      const where = touched.length === 0 ? 'padding, no field' : `spans fields ${touched.join(', ')}`;
      this.reject(i, `invalid bpf_context access off=${off} size=${size}: ${where} of ${name}`);
    }
    const key = `${i}:${off}:${size}`;
    if (!this.accesses.has(key)) {
      this.accesses.set(key, {
        insnIndex: i,
        event: name,
        field: field.name,
        offset: off,
        size,
        fieldOffset: off - field.byteOffset,
      });
    }
  }
  return UNKNOWN_SCALAR_SIZED(size, kind);
}

export function invalidCtx(this: Verifier, i: number, off: number, size: number): never {
  this.reject(i, `invalid bpf_context access off=${off} size=${size}`);
}

/** The packet pointer a 4-byte context read at `off` gives, or null for another field. */
export function packetSlotRead(this: Verifier, off: number, slots: { data: number; dataEnd: number; meta?: number }): Reg | null {
  if (off === slots.data) return pointerReg(RegType.packet);
  if (off === slots.dataEnd) return pointerReg(RegType.packetEnd);
  if (off === slots.meta) return pointerReg(RegType.packetMeta);
  return null;
}

/**
 * `BPF_LD_[ABS|IND]` (`check_ld_abs`): a load from the socket buffer in r6 that ends the
 * program when out of range; r0 gets the value, r1-r5 are clobbered as by a call.
 */
export function ldAbs(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const ctx = this.readReg(s, i, 6);
  if (s.refs.length > 0) this.reject(i, 'BPF_LD_[ABS|IND] cannot be mixed with socket references');
  if (ctx.type !== RegType.ctx) this.reject(i, 'at the time of BPF_LD_ABS|IND R6 != pointer to skb');
  if (mode(p.opcode[i]!) === Mode.IND) this.readReg(s, i, p.src[i]!);
  if (ctx.off !== 0 || !isConst(ctx.v) || constValue(ctx.v) !== 0n) {
    this.reject(i, `dereference of modified ctx ptr R6 off=${ctx.off} disallowed`);
  }
  const regs = this.regs(s);
  for (let r = 1; r <= 5; r++) regs[r] = NOT_INIT;
  regs[0] = UNKNOWN_SCALAR; // the kernel does not narrow it to the load size
}

/** The memory family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const memoryChecks = { load, store, atomic, access, packetAccess, regionAccess, ctxAccess, invalidCtx, packetSlotRead, ldAbs };
