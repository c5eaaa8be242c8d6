import fc from 'fast-check';

/**
 * Random eBPF programs for differential tests: random 64-bit values in r0, r2..r9, then straight-
 * line ALU, loads, stores, atomics and forward conditional jumps (JMP and JMP32), then exit.
 * With `kernel: true` the programs also pass the kernel verifier: no r10 as a value, aligned
 * stack accesses in [r10-512, r10-16] only, no constant division by zero, in-range constant
 * shifts, no context access.
 */
export interface RandomProgramOptions {
  kernel?: boolean;
}

export type Insn = [op: number, dst: number, src: number, off: number, imm: number];

/** Instruction slots as program bytes (little-endian, as the kernel loads them). */
export function assemble(slots: Insn[]): Uint8Array {
  const bytes = new Uint8Array(slots.length * 8);
  const view = new DataView(bytes.buffer);
  slots.forEach(([op, d, s, o, k], i) => {
    bytes[i * 8] = op;
    bytes[i * 8 + 1] = (s << 4) | d;
    view.setInt16(i * 8 + 2, o, true);
    view.setInt32(i * 8 + 4, k, true);
  });
  return bytes;
}

export function randomProgram(options: RandomProgramOptions = {}): fc.Arbitrary<Uint8Array> {
  const kernel = options.kernel === true;

  const reg = fc.integer({ min: 0, max: 9 });
  const anyReg = fc.integer({ min: 0, max: kernel ? 9 : 10 });
  const imm32 = fc.oneof(
    fc.integer({ min: -2147483648, max: 2147483647 }),
    fc.constantFrom(0, 1, -1, 2, 31, 32, 63, 64, 0x7fffffff, -0x80000000, 0xff, 0xffff),
  );
  const aluOps = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0, 0xb0, 0xc0];

  const alu: fc.Arbitrary<Insn[]> = fc
    .tuple(fc.constantFrom(0x04, 0x07), fc.constantFrom(...aluOps), fc.boolean(), reg, anyReg, imm32, fc.boolean())
    .map(([cls, code, isReg, dst, src, imm, signed]) => {
      let off = 0;
      if ((code === 0x30 || code === 0x90) && signed) off = 1;
      let k = imm;
      if (kernel && !isReg) {
        if ((code === 0x30 || code === 0x90) && k === 0) k = 1;
        if (code === 0x60 || code === 0x70 || code === 0xc0) k &= cls === 0x07 ? 63 : 31;
      }
      return [[cls | code | (isReg ? 8 : 0), dst, isReg ? src : 0, off, isReg ? 0 : k]];
    });
  const neg: fc.Arbitrary<Insn[]> = fc.tuple(fc.constantFrom(0x84, 0x87), reg).map(([op, d]) => [[op, d, 0, 0, 0]]);
  const movsx: fc.Arbitrary<Insn[]> = fc
    .tuple(fc.boolean(), reg, anyReg, fc.constantFrom(8, 16, 32))
    .map(([is64, d, s, o]) => [[is64 ? 0xbf : 0xbc, d, s, is64 ? o : o === 32 ? 16 : o, 0]]);
  const endian: fc.Arbitrary<Insn[]> = fc
    .tuple(fc.constantFrom(0xd4, 0xdc, 0xd7), reg, fc.constantFrom(16, 32, 64))
    .map(([op, d, w]) => [[op, d, 0, 0, w]]);
  const lddw: fc.Arbitrary<Insn[]> = fc
    .tuple(reg, imm32, imm32)
    .map(([d, lo, hi]) => [[0x18, d, 0, 0, lo], [0, 0, 0, 0, hi]]);
  // stack slots below r10 (frame 0) and context bytes through r1 (which random ALU may clobber:
  // then both VMs must fault at the same place)
  const sizeCode = fc.constantFrom(0x00, 0x08, 0x10, 0x18);
  const stackOff = kernel ? fc.integer({ min: -64, max: -2 }).map((k) => k * 8) : fc.integer({ min: -520, max: 8 });
  const baseReg = kernel ? fc.constant(10) : fc.constantFrom(1, 10, 10);
  const load: fc.Arbitrary<Insn[]> = fc
    .tuple(sizeCode, fc.boolean(), reg, baseReg, stackOff, fc.integer({ min: -4, max: 70 }))
    .map(([size, sx, d, base, so, co]) => {
      const signed = sx && size !== 0x18;
      return [[(signed ? 0x81 : 0x61) | size, d, base, base === 10 ? so : co, 0]];
    });
  const store: fc.Arbitrary<Insn[]> = fc
    .tuple(sizeCode, fc.boolean(), anyReg, baseReg, stackOff, fc.integer({ min: -4, max: 70 }), imm32)
    .map(([size, isReg, s, base, so, co, imm]) => [
      [(isReg ? 0x63 : 0x62) | size, base, isReg ? s : 0, base === 10 ? so : co, isReg ? 0 : imm],
    ]);
  const atomic: fc.Arbitrary<Insn[]> = fc
    .tuple(fc.constantFrom(0xc3, 0xdb), fc.constantFrom(0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1), reg, fc.integer({ min: -64, max: -16 }))
    .map(([op, k, s, o]) => [[op, 10, s, o & ~7, k]]);
  const jumpOps = [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0];
  const jump = fc
    .tuple(fc.constantFrom(0x05, 0x06), fc.constantFrom(...jumpOps), fc.boolean(), reg, reg, imm32, fc.integer({ min: 0, max: 6 }))
    .map(([cls, code, isReg, d, s, imm, skip]) => ({ jump: [cls | code | (isReg ? 8 : 0), d, isReg ? s : 0, 0, isReg ? 0 : imm] as Insn, skip }));

  const body = fc.array(
    fc.oneof(
      { weight: 8, arbitrary: alu.map((i) => ({ insns: i })) },
      { weight: 1, arbitrary: neg.map((i) => ({ insns: i })) },
      { weight: 1, arbitrary: movsx.map((i) => ({ insns: i })) },
      { weight: 1, arbitrary: endian.map((i) => ({ insns: i })) },
      { weight: 2, arbitrary: lddw.map((i) => ({ insns: i })) },
      { weight: 2, arbitrary: load.map((i) => ({ insns: i })) },
      { weight: 2, arbitrary: store.map((i) => ({ insns: i })) },
      { weight: 1, arbitrary: atomic.map((i) => ({ insns: i })) },
      { weight: 2, arbitrary: jump.map((j) => ({ jump: j })) },
    ),
    { minLength: 1, maxLength: 40 },
  );
  const inits = fc.array(fc.tuple(imm32, imm32), { minLength: 10, maxLength: 10 });

    function buildProgram(parts: { insns?: Insn[]; jump?: { jump: Insn; skip: number } }[], init: [number, number][]): Uint8Array {
    const slots: Insn[] = [];
    // r0, r2..r9 start from random 64-bit values
    for (const r of kernel ? [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] : [0, 2, 3, 4, 5, 6, 7, 8, 9]) {
      const [lo, hi] = init[r] as [number, number];
      slots.push([0x18, r, 0, 0, lo], [0, 0, 0, 0, hi]);
    }
    // a forward jump skips whole parts (never into an lddw)
    const partStarts: number[] = [];
    const partSlots: Insn[][] = parts.map((p) => (p.insns ? p.insns : [p.jump?.jump as Insn]));
    let at = slots.length;
    for (const s of partSlots) {
      partStarts.push(at);
      at += s.length;
    }
    partStarts.push(at); // the exit
    parts.forEach((p, i) => {
      const s = partSlots[i] as Insn[];
      if (p.jump) {
        const targetPart = Math.min(i + 1 + p.jump.skip, parts.length);
        const target = partStarts[targetPart] as number;
        const from = partStarts[i] as number;
        (s[0] as Insn)[3] = target - from - 1;
      }
      slots.push(...s);
    });
    slots.push([0x95, 0, 0, 0, 0]);
    return assemble(slots);
  }


  return fc.tuple(body, inits).map(([parts, init]) => buildProgram(parts, init));
}
