/**
 * A small WebAssembly binary encoder: just what the BPF compiler emits (one imported memory,
 * imported and defined functions, mutable globals, exports, code). Byte layouts follow the
 * WebAssembly core specification 2.0, section 5 ("Binary Format"). Writers grow by doubling.
 */

/** Value types (`valtype`). */
export const ValType = { i32: 0x7f, i64: 0x7e } as const;
export type ValType = (typeof ValType)[keyof typeof ValType];

/** Block type "no result" (`blocktype` ε). */
export const BLOCK_VOID = 0x40;

/** Opcodes the compiler uses (single-byte instructions; `0xfc` prefixed ones in {@link OpFc}). */
export const Op = {
  unreachable: 0x00,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  brTable: 0x0e,
  return: 0x0f,
  call: 0x10,
  drop: 0x1a,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  globalGet: 0x23,
  globalSet: 0x24,
  i32Load: 0x28,
  i64Load: 0x29,
  i32Load8U: 0x2d,
  i64Load8S: 0x30,
  i64Load8U: 0x31,
  i64Load16S: 0x32,
  i64Load16U: 0x33,
  i64Load32S: 0x34,
  i64Load32U: 0x35,
  i32Store: 0x36,
  i64Store: 0x37,
  i32Store8: 0x3a,
  i32Store16: 0x3b,
  i64Store8: 0x3c,
  i64Store16: 0x3d,
  i64Store32: 0x3e,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32LtU: 0x49,
  i32GtS: 0x4a,
  i32GtU: 0x4b,
  i32LeS: 0x4c,
  i32LeU: 0x4d,
  i32GeS: 0x4e,
  i32GeU: 0x4f,
  i64Eqz: 0x50,
  i64Eq: 0x51,
  i64Ne: 0x52,
  i64LtS: 0x53,
  i64LtU: 0x54,
  i64GtS: 0x55,
  i64GtU: 0x56,
  i64LeS: 0x57,
  i64LeU: 0x58,
  i64GeS: 0x59,
  i64GeU: 0x5a,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32DivS: 0x6d,
  i32DivU: 0x6e,
  i32RemS: 0x6f,
  i32RemU: 0x70,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrS: 0x75,
  i32ShrU: 0x76,
  i32Rotl: 0x77,
  i32Rotr: 0x78,
  i64Add: 0x7c,
  i64Sub: 0x7d,
  i64Mul: 0x7e,
  i64DivS: 0x7f,
  i64DivU: 0x80,
  i64RemS: 0x81,
  i64RemU: 0x82,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Shl: 0x86,
  i64ShrS: 0x87,
  i64ShrU: 0x88,
  i32WrapI64: 0xa7,
  i64ExtendI32S: 0xac,
  i64ExtendI32U: 0xad,
  i32Extend8S: 0xc0,
  i32Extend16S: 0xc1,
  i64Extend8S: 0xc2,
  i64Extend16S: 0xc3,
  i64Extend32S: 0xc4,
} as const;

/** `0xfc`-prefixed instructions (bulk memory). */
export const OpFc = { memoryCopy: 0x0a, memoryFill: 0x0b } as const;

/** A growable byte buffer with the LEB128 writers of the binary format. */
export class ByteWriter {
  private buf = new Uint8Array(256);
  length = 0;

  byte(b: number): this {
    if (this.length === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = b & 0xff;
    return this;
  }

  bytes(bs: ArrayLike<number>): this {
    for (let i = 0; i < bs.length; i++) this.byte(bs[i] as number);
    return this;
  }

  /** Unsigned LEB128 of a 32-bit value. */
  u32(v: number): this {
    let x = v >>> 0;
    do {
      let b = x & 0x7f;
      x >>>= 7;
      if (x !== 0) b |= 0x80;
      this.byte(b);
    } while (x !== 0);
    return this;
  }

  /** Signed LEB128 of a 32-bit value. */
  s32(v: number): this {
    let x = v | 0;
    for (;;) {
      const b = x & 0x7f;
      x >>= 7;
      if ((x === 0 && (b & 0x40) === 0) || (x === -1 && (b & 0x40) !== 0)) {
        this.byte(b);
        return this;
      }
      this.byte(b | 0x80);
    }
  }

  /** Signed LEB128 of a 64-bit value given as two 32-bit halves. */
  s64(lo: number, hi: number): this {
    if (hi === lo >> 31) return this.s32(lo);
    let x = BigInt.asIntN(64, (BigInt(hi | 0) << 32n) | BigInt(lo >>> 0));
    for (;;) {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      if ((x === 0n && (b & 0x40) === 0) || (x === -1n && (b & 0x40) !== 0)) {
        this.byte(b);
        return this;
      }
      this.byte(b | 0x80);
    }
  }

  name(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).bytes(b);
  }

  /** A length-prefixed copy of another writer. */
  sized(w: ByteWriter): this {
    this.u32(w.length);
    return this.bytes(w.view());
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

export interface FuncType {
  params: ValType[];
  results: ValType[];
}

export interface FuncBody {
  typeIndex: number;
  /** Locals after the parameters, as runs of one type. */
  locals: [count: number, type: ValType][];
  /** The instructions, without the final `end` (added here). */
  code: ByteWriter;
}

export interface ModuleSpec {
  types: FuncType[];
  /** Imported functions, indexes 0.. in order. */
  importFuncs: { module: string; name: string; typeIndex: number }[];
  /** An imported memory (`min` pages). */
  importMemory: { module: string; name: string; minPages: number };
  globals: { type: ValType; mutable: boolean; init: number }[];
  funcs: FuncBody[];
  exports: { name: string; funcIndex: number }[];
}

/** Encodes a module (sections 1 type, 2 import, 3 function, 6 global, 7 export, 10 code). */
export function encodeModule(m: ModuleSpec): Uint8Array {
  const out = new ByteWriter();
  out.bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const section = (id: number, body: ByteWriter) => {
    out.byte(id);
    out.sized(body);
  };

  const types = new ByteWriter().u32(m.types.length);
  for (const t of m.types) {
    types.byte(0x60).u32(t.params.length).bytes(t.params).u32(t.results.length).bytes(t.results);
  }
  section(1, types);

  const imports = new ByteWriter().u32(m.importFuncs.length + 1);
  for (const f of m.importFuncs) imports.name(f.module).name(f.name).byte(0x00).u32(f.typeIndex);
  imports.name(m.importMemory.module).name(m.importMemory.name).byte(0x02).byte(0x00).u32(m.importMemory.minPages);
  section(2, imports);

  const funcs = new ByteWriter().u32(m.funcs.length);
  for (const f of m.funcs) funcs.u32(f.typeIndex);
  section(3, funcs);

  if (m.globals.length > 0) {
    const globals = new ByteWriter().u32(m.globals.length);
    for (const g of m.globals) {
      globals.byte(g.type).byte(g.mutable ? 1 : 0);
      if (g.type === ValType.i32) globals.byte(Op.i32Const).s32(g.init);
      else globals.byte(Op.i64Const).s32(g.init);
      globals.byte(Op.end);
    }
    section(6, globals);
  }

  const exports = new ByteWriter().u32(m.exports.length);
  for (const e of m.exports) exports.name(e.name).byte(0x00).u32(e.funcIndex);
  section(7, exports);

  const code = new ByteWriter().u32(m.funcs.length);
  for (const f of m.funcs) {
    const body = new ByteWriter().u32(f.locals.length);
    for (const [count, type] of f.locals) body.u32(count).byte(type);
    body.bytes(f.code.view()).byte(Op.end);
    code.sized(body);
  }
  section(10, code);
  return out.view().slice();
}
