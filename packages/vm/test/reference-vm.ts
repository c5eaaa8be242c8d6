/**
 * A slow, obviously-correct reference interpreter for differential tests: registers are BigInt
 * (u64), each instruction is decoded from its bytes when executed, and the semantics are
 * written straight from RFC 9669 with BigInt arithmetic. Memory: the same region encoding as
 * the fast VM (region id in the high 32 bits): 1 = context, 2 = stack (frame 0 only).
 */
const M64 = (1n << 64n) - 1n;
const M32 = (1n << 32n) - 1n;

export interface ReferenceResult {
  status: 'ok' | 'fault';
  faultPc?: number;
  regs: bigint[];
  context: Uint8Array;
  stack: Uint8Array;
  steps: number;
}

const s64 = (x: bigint) => BigInt.asIntN(64, x);
const s32 = (x: bigint) => BigInt.asIntN(32, x);
const u64 = (x: bigint) => BigInt.asUintN(64, x);
const u32 = (x: bigint) => BigInt.asUintN(32, x);
function sext(x: bigint, bits: number): bigint {
  return u64(BigInt.asIntN(bits, x));
}
function truncDiv(a: bigint, b: bigint): bigint {
  return a / b; // BigInt division truncates toward zero
}
function swap(x: bigint, bytes: number): bigint {
  let r = 0n;
  for (let i = 0; i < bytes; i++) r = (r << 8n) | ((x >> BigInt(8 * i)) & 0xffn);
  return r;
}

export function referenceRun(program: Uint8Array, contextIn: Uint8Array, maxSteps = 100_000): ReferenceResult {
  const view = new DataView(program.buffer, program.byteOffset, program.byteLength);
  const context = contextIn.slice();
  const stack = new Uint8Array(4096);
  const regions = new Map<bigint, Uint8Array>([
    [1n, context],
    [2n, stack],
  ]);
  const r: bigint[] = new Array(11).fill(0n);
  r[1] = 1n << 32n;
  r[2] = BigInt(context.length);
  r[10] = (2n << 32n) | 4096n;
  const n = program.length / 8;
  let pc = 0;
  let steps = 0;

  // An access is relative to its base pointer's region: base + off must stay in that region.
  let baseRegion = 0n;
  const where = (addr: bigint, size: number): [Uint8Array, number] | undefined => {
    if (addr >> 32n !== baseRegion) return undefined;
    const mem = regions.get(addr >> 32n);
    const off = Number(addr & M32);
    // frame 0 reaches its own 512 bytes of the stack only
    const low = addr >> 32n === 2n ? 4096 - 512 : 0;
    if (!mem || off < low || off + size > mem.length) return undefined;
    return [mem, off];
  };
  const load = (addr: bigint, size: number): bigint | undefined => {
    const w = where(addr, size);
    if (!w) return undefined;
    let v = 0n;
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(w[0][w[1] + i] as number);
    return v;
  };
  const store = (addr: bigint, size: number, value: bigint): boolean => {
    const w = where(addr, size);
    if (!w) return false;
    for (let i = 0; i < size; i++) w[0][w[1] + i] = Number((value >> BigInt(8 * i)) & 0xffn);
    return true;
  };
  const fault = (): ReferenceResult => ({ status: 'fault', faultPc: pc, regs: r, context, stack, steps });

  while (pc < n && steps < maxSteps) {
    steps++;
    const b = pc * 8;
    const op = program[b] as number;
    const dst = (program[b + 1] as number) & 15;
    const src = (program[b + 1] as number) >> 4;
    const off = view.getInt16(b + 2, true);
    const imm = BigInt(view.getInt32(b + 4, true));
    const cls = op & 7;
    const isReg = (op & 8) !== 0;

    if (cls === 4 || cls === 7) {
      const is64 = cls === 7;
      const code = op & 0xf0;
      const a = is64 ? r[dst] as bigint : u32(r[dst] as bigint);
      let bv = isReg ? (r[src] as bigint) : u64(imm);
      if (!is64) bv = u32(bv);
      const mask = is64 ? M64 : M32;
      const bits = is64 ? 64 : 32;
      const sx = (x: bigint) => (is64 ? s64(x) : s32(x));
      let res: bigint;
      switch (code) {
        case 0x00: res = a + bv; break;
        case 0x10: res = a - bv; break;
        case 0x20: res = a * bv; break;
        case 0x30:
          if (off === 1) res = bv === 0n ? 0n : truncDiv(sx(a), sx(bv));
          else res = bv === 0n ? 0n : a / bv;
          break;
        case 0x40: res = a | bv; break;
        case 0x50: res = a & bv; break;
        case 0x60: res = a << (bv & BigInt(bits - 1)); break;
        case 0x70: res = a >> (bv & BigInt(bits - 1)); break;
        case 0x80: res = -a; break;
        case 0x90:
          if (off === 1) res = bv === 0n ? a : sx(a) % sx(bv);
          else res = bv === 0n ? a : a % bv;
          break;
        case 0xa0: res = a ^ bv; break;
        case 0xb0:
          if (isReg && off !== 0) res = sext(r[src] as bigint, off);
          else res = bv;
          break;
        case 0xc0: res = sx(a) >> (bv & BigInt(bits - 1)); break;
        case 0xd0: {
          const width = Number(imm);
          const x = r[dst] as bigint;
          if (!is64 && !isReg) res = x & ((1n << BigInt(width)) - 1n); // le
          else res = swap(x, width / 8); // be, bswap
          r[dst] = u64(res);
          pc++;
          continue;
        }
        default: throw new Error(`reference: alu op ${code}`);
      }
      r[dst] = u64(res & mask);
      if (!is64) r[dst] = u32(r[dst] as bigint);
      pc++;
      continue;
    }
    if (cls === 5 || cls === 6) {
      const code = op & 0xf0;
      if (code === 0x90) break; // exit
      if (code === 0x00) {
        pc = pc + 1 + (cls === 5 ? off : Number(imm));
        continue;
      }
      const is64 = cls === 5;
      let a = r[dst] as bigint;
      let bv = isReg ? (r[src] as bigint) : u64(imm);
      if (!is64) {
        a = u32(a);
        bv = u32(bv);
      }
      const sa = is64 ? s64(a) : s32(a);
      const sb = is64 ? s64(bv) : s32(bv);
      const taken = {
        16: a === bv, 32: a > bv, 48: a >= bv, 64: (a & bv) !== 0n, 80: a !== bv,
        96: sa > sb, 112: sa >= sb, 160: a < bv, 176: a <= bv, 192: sa < sb, 208: sa <= sb,
      }[code];
      if (taken === undefined) throw new Error(`reference: jmp op ${code}`);
      pc = taken ? pc + 1 + off : pc + 1;
      continue;
    }
    if (op === 0x18) {
      const hi = BigInt(view.getUint32(b + 12, true));
      r[dst] = (hi << 32n) | u32(imm);
      pc += 2;
      continue;
    }
    const size = [4, 2, 1, 8][(op >> 3) & 3] as number;
    if (cls === 1) {
      baseRegion = (r[src] as bigint) >> 32n;
      const v = load(u64((r[src] as bigint) + BigInt(off)), size);
      if (v === undefined) return fault();
      r[dst] = (op & 0xe0) === 0x80 ? sext(v, size * 8) : v;
      pc++;
      continue;
    }
    if (cls === 2 || (cls === 3 && (op & 0xe0) === 0x60)) {
      const v = cls === 2 ? u64(imm) : (r[src] as bigint);
      baseRegion = (r[dst] as bigint) >> 32n;
      if (!store(u64((r[dst] as bigint) + BigInt(off)), size, v)) return fault();
      pc++;
      continue;
    }
    if (cls === 3 && (op & 0xe0) === 0xc0) {
      const addr = u64((r[dst] as bigint) + BigInt(off));
      baseRegion = (r[dst] as bigint) >> 32n;
      const old = load(addr, size);
      if (old === undefined) return fault();
      const m = size === 4 ? M32 : M64;
      const v = (r[src] as bigint) & m;
      const k = Number(imm);
      let nv: bigint;
      if (k === 0xf1) {
        if (old === ((r[0] as bigint) & m)) store(addr, size, v);
        r[0] = old;
        pc++;
        continue;
      }
      switch (k & 0xf0) {
        case 0x00: nv = old + v; break;
        case 0x40: nv = old | v; break;
        case 0x50: nv = old & v; break;
        case 0xa0: nv = old ^ v; break;
        default: nv = v; break; // xchg
      }
      store(addr, size, nv & m);
      if (k & 1) r[src] = old;
      pc++;
      continue;
    }
    throw new Error(`reference: opcode 0x${op.toString(16)}`);
  }
  return { status: 'ok', regs: r, context, stack, steps };
}
