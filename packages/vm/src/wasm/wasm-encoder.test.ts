import { describe, expect, it } from 'vitest';
import { ByteWriter, encodeModule, Op, ValType } from './wasm-encoder.js';

// the WebAssembly JS API, typed here (the package builds without the DOM library)
interface WasmJs {
  Memory: new (d: { initial: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmJs }).WebAssembly;

const hex = (w: ByteWriter) => [...w.view()].map((b) => b.toString(16).padStart(2, '0')).join(' ');

describe('ByteWriter LEB128', () => {
  it.each([
    [0, '00'],
    [127, '7f'],
    [128, '80 01'],
    [624485, 'e5 8e 26'],
    [0xffffffff, 'ff ff ff ff 0f'],
  ])('u32 %d → %s', (v, expected) => {
    expect(hex(new ByteWriter().u32(v))).toBe(expected);
  });

  it.each([
    [0, '00'],
    [-1, '7f'],
    [63, '3f'],
    [64, 'c0 00'],
    [-64, '40'],
    [-65, 'bf 7f'],
    [-123456, 'c0 bb 78'],
    [0x7fffffff, 'ff ff ff ff 07'],
    [-0x80000000, '80 80 80 80 78'],
  ])('s32 %d → %s', (v, expected) => {
    expect(hex(new ByteWriter().s32(v))).toBe(expected);
  });

  it.each([
    [0, 1, '80 80 80 80 10'], // 2^32
    [-1, 0, 'ff ff ff ff 0f'], // 2^32 - 1
    [0, -0x80000000, '80 80 80 80 80 80 80 80 80 7f'], // INT64_MIN
    [-1, 0x7fffffff, 'ff ff ff ff ff ff ff ff ff 00'], // INT64_MAX
    [-5, -1, '7b'], // -5 (one byte through the 32-bit path)
  ])('s64 (lo %d, hi %d) → %s', (lo, hi, expected) => {
    expect(hex(new ByteWriter().s64(lo, hi))).toBe(expected);
  });

  it('grows by doubling past its first buffer', () => {
    const w = new ByteWriter();
    for (let i = 0; i < 1000; i++) w.byte(i);
    expect(w.length).toBe(1000);
    expect(w.view()[999]).toBe(999 & 0xff);
  });
});

describe('encodeModule', () => {
  it('encodes a module WebAssembly accepts and runs: an imported memory, a helper import, i64 math', () => {
    // f(x: i32) = helper(x) + i32(load64(8) * 3)
    const code = new ByteWriter();
    code.byte(Op.localGet).u32(0).byte(Op.call).u32(0);
    code.byte(Op.i32Const).s32(0).byte(Op.i64Load).u32(3).u32(8).byte(Op.i64Const).s32(3).byte(Op.i64Mul).byte(Op.i32WrapI64);
    code.byte(Op.i32Add);
    const bytes = encodeModule({
      types: [{ params: [ValType.i32], results: [ValType.i32] }],
      importFuncs: [{ module: 'm', name: 'helper', typeIndex: 0 }],
      importMemory: { module: 'm', name: 'memory', minPages: 1 },
      globals: [{ type: ValType.i32, mutable: true, init: 0 }],
      funcs: [{ typeIndex: 0, locals: [[1, ValType.i64]], code }],
      exports: [{ name: 'f', funcIndex: 1 }],
    });
    expect([...bytes.subarray(0, 8)]).toEqual([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    const memory = new WebAssembly.Memory({ initial: 1 });
    new DataView(memory.buffer).setBigUint64(8, 14n, true);
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { m: { memory, helper: (x: number) => x * 2 } });
    expect((instance.exports.f as (x: number) => number)(5)).toBe(10 + 42);
  });
});
