// Sequences of bpf_map_push_elem / bpf_map_pop_elem / bpf_map_peek_elem on a queue or stack map
// (map 1) as one program, which writes every helper's r0 and every popped or peeked value into
// the value of an array map (map 0): 16 bytes per operation (r0, then the value, zero-extended).
// The same bytes run in the kernel (XDP through BPF_PROG_TEST_RUN) and in the VM; `expectedResults`
// is a plain model of the kernel's queue_stack_maps.c to check the VM against without a kernel.
import fc from 'fast-check';
import { slot } from './slot.js';

export type QueueStackOp =
  | { op: 'push'; value: number; flags: number | 'high' }
  | { op: 'pop' }
  | { op: 'peek' };

export interface QueueStackCase {
  type: 22 | 23;
  valueSize: 4 | 8;
  maxEntries: number;
  ops: QueueStackOp[];
}

/** Random cases: queue or stack, 1–5 entries, 4- or 8-byte values, 1–40 operations. */
export const queueStackCase: fc.Arbitrary<QueueStackCase> = fc.record({
  type: fc.constantFrom(22 as const, 23 as const),
  valueSize: fc.constantFrom(4 as const, 8 as const),
  maxEntries: fc.integer({ min: 1, max: 5 }),
  ops: fc.array(
    fc.oneof(
      { weight: 5, arbitrary: fc.record({ op: fc.constant('push' as const), value: fc.integer({ min: -0x80000000, max: 0x7fffffff }), flags: fc.constantFrom<number | 'high'>(0, 0, 2, 2, 1, 3, 'high') }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('pop' as const) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('peek' as const) }) },
    ),
    { minLength: 1, maxLength: 40 },
  ),
});

/** Bytes of the result value (map 0's value size). */
export const resultBytes = (c: QueueStackCase) => 16 * c.ops.length;

/** The program of a case; lddw src 1 / 2 with imm 0 and 1 name maps 0 (results) and 1 (the queue or stack). */
export function queueStackProgram(c: QueueStackCase): Uint8Array {
  const out: number[] = [];
  const insn = (op: number, dst: number, src: number, off: number, imm: number) => out.push(...slot(op, dst, src, off, imm));
  const store = c.valueSize === 8 ? 0x7a : 0x62; // *(u64|u32 *)(r10 - 8) = imm
  const load = c.valueSize === 8 ? 0x79 : 0x61;
  insn(0x18, 6, 2, 0, 0); // r6 = &map[0].value (BPF_PSEUDO_MAP_VALUE)
  insn(0, 0, 0, 0, 0);
  c.ops.forEach((o, i) => {
    insn(0x7a, 10, 0, -8, 0); // *(u64 *)(r10 - 8) = 0
    insn(store, 10, 0, -8, o.op === 'push' ? o.value : 0x5a5a5a5a);
    insn(0x18, 1, 1, 0, 1); // r1 = map 1
    insn(0, 0, 0, 0, 0);
    insn(0xbf, 2, 10, 0, 0); // r2 = r10
    insn(0x07, 2, 0, 0, -8); // r2 += -8
    if (o.op === 'push') {
      if (o.flags === 'high') {
        insn(0xb7, 3, 0, 0, 2); // r3 = 2 | 1 << 32
        insn(0x18, 4, 0, 0, 0); // r4 = 1 << 32
        insn(0, 0, 0, 0, 1);
        insn(0x0f, 3, 4, 0, 0);
      } else insn(0xb7, 3, 0, 0, o.flags); // r3 = flags
      insn(0x85, 0, 0, 0, 87); // call bpf_map_push_elem
    } else insn(0x85, 0, 0, 0, o.op === 'pop' ? 88 : 89);
    insn(0x7b, 6, 0, 16 * i, 0); // *(u64 *)(r6 + 16i) = r0
    if (o.op !== 'push') {
      insn(load, 7, 10, -8, 0); // r7 = the value
      insn(0x7b, 6, 7, 16 * i + 8, 0); // *(u64 *)(r6 + 16i + 8) = r7
    }
  });
  insn(0xb7, 0, 0, 0, 0);
  insn(0x95, 0, 0, 0, 0);
  return Uint8Array.from(out);
}

/** What the kernel gives for a case: the result value, from a model of queue_stack_maps.c. */
export function expectedResults(c: QueueStackCase): Uint8Array {
  const out = new Uint8Array(resultBytes(c));
  const view = new DataView(out.buffer);
  const held: bigint[] = []; // oldest first
  const mask = c.valueSize === 8 ? (1n << 64n) - 1n : 0xffffffffn;
  const errno = (e: number) => BigInt.asUintN(64, BigInt(-e));
  c.ops.forEach((o, i) => {
    let r0 = 0n;
    let value = 0n;
    if (o.op === 'push') {
      if (o.flags !== 0 && o.flags !== 2) r0 = errno(22);
      else if (held.length === c.maxEntries && o.flags !== 2) r0 = errno(7);
      else {
        if (held.length === c.maxEntries) held.shift(); // BPF_EXIST: drop the oldest
        held.push(BigInt(o.value) & mask);
      }
    } else if (held.length === 0) r0 = errno(2);
    else {
      value = c.type === 22 ? (held[0] as bigint) : (held.at(-1) as bigint);
      if (o.op === 'pop') {
        if (c.type === 22) held.shift();
        else held.pop();
      }
    }
    view.setBigUint64(16 * i, r0, true);
    view.setBigUint64(16 * i + 8, value, true);
  });
  return out;
}
