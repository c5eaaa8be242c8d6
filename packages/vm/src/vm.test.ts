import { assembleInstructions, encode } from '@probeyard/isa';
import { describe, expect, it } from 'vitest';
import { isVmError, VmError, VmFault } from './errors.js';
import { loadAssembly } from './load-assembly.js';
import type { ProgArray } from './maps/create-map.js';
import { loadProgram, loadProgramOrThrow } from './program.js';
import { RunStatus, Vm } from './vm.js';

function hex(text: string): Uint8Array {
  return Uint8Array.from(text.split(/\s+/).filter(Boolean).map((b) => Number.parseInt(b, 16)));
}
function asm(text: string): Uint8Array {
  return encode(assembleInstructions(text, { syntax: 'llvm' }));
}
function runText(text: string, context = new Uint8Array(0), vm = new Vm()) {
  const program = loadProgramOrThrow(asm(text), vm.loadOptions());
  const status = vm.run(program, context);
  return { vm, status };
}

describe('faults', () => {
  it('an out-of-bounds context load is a VmFault with pc, text, address and region', () => {
    const { vm, status } = runText('r0 = 0\nr2 = *(u32 *)(r1 + 6)\nexit', new Uint8Array(8));
    expect(status).toBe(RunStatus.fault);
    const f = vm.fault as VmFault;
    expect(f).toBeInstanceOf(VmFault);
    expect(f.code).toBe('fault');
    expect(f.pc).toBe(1);
    expect(f.address).toBe(0x1_0000_0006n);
    expect(f.region).toBe('context');
    expect(f.insnText).toBe('r2 = *(u32 *)(r1 + 6); 61 12 06 00 00 00 00 00');
    expect(f.message).toBe(
      'memory fault: 4-byte access at 0x1_00000006 outside region context of 8 bytes at pc 1 (r2 = *(u32 *)(r1 + 6); 61 12 06 00 00 00 00 00)',
    );
  });

  it.each([
    ['a NULL pointer', 'r1 = 0\nr0 = *(u8 *)(r1 + 0)\nexit', 'none', 0n],
    ['above the stack frame', 'r0 = *(u64 *)(r10 + 0)\nexit', 'stack', 0x2_0000_1000n],
    ['a scalar', 'r1 = 77\n*(u32 *)(r1 + 0) = 1\nr0 = 0\nexit', 'none', 77n],
    ['below the 512-byte frame', 'r0 = *(u64 *)(r10 - 520)\nexit', 'stack', 0x2_0000_1000n - 520n],
  ])('%s faults, the host never crashes', (_what, text, region, address) => {
    const { vm, status } = runText(text as string);
    expect(status).toBe(RunStatus.fault);
    expect(vm.fault?.region).toBe(region);
    expect(vm.fault?.address).toBe(address);
  });

  it('dereferencing a map handle faults in region "map"', () => {
    const { vm, programs } = loadAssembly('.map m array key=4 value=8 entries=1\nr1 = m ll\nr0 = *(u64 *)(r1 + 0)\nexit');
    expect(vm.run(programs.get('.text') ?? [...programs.values()][0]!, new Uint8Array(0))).toBe(RunStatus.fault);
    expect(vm.fault?.region).toBe('map');
  });

  it('an endless loop exhausts the instruction budget', () => {
    const vm = new Vm({ budget: 1000 });
    const { status } = runText('r0 = 0\nl: r0 += 1\ngoto l\nexit', new Uint8Array(0), vm);
    expect(status).toBe(RunStatus.budgetExhausted);
    expect(vm.fault?.code).toBe('budget-exhausted');
    expect(vm.insnCount).toBe(1001);
  });

  it('counts every executed instruction', () => {
    const { vm, status } = runText('r0 = 3\nl: r0 += -1\nif r0 != 0 goto l\nexit');
    expect(status).toBe(RunStatus.ok);
    expect(vm.insnCount).toBe(1 + 3 * 2 + 1);
  });
});

describe('load-time refusals', () => {
  it('names an unknown helper', () => {
    const r = loadProgram(hex('85 00 00 00 24 00 00 00 95 00 00 00 00 00 00 00'), new Vm().loadOptions());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe('unknown-helper');
    expect(r.diagnostics[0]?.message).toBe('unknown helper 36 (bpf_probe_write_user)');
    expect(r.diagnostics[0]?.insnIndex).toBe(0);
  });

  it.each([
    ['legacy LD ABS', '20 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00', 'unsupported', 'legacy packet access (LD ABS/IND) is not supported by this VM'],
    ['a jump out of the program', '05 00 05 00 00 00 00 00 95 00 00 00 00 00 00 00', 'invalid-program', 'jump target 6 is outside the program (0..1)'],
    ['a write to r10', 'b7 0a 00 00 00 00 00 00 95 00 00 00 00 00 00 00', 'invalid-program', 'dst register r10 is not writable'],
    ['falling off the end', 'b7 00 00 00 00 00 00 00', 'invalid-program', 'the last instruction must be exit or an unconditional jump'],
    ['a jump into an lddw', '05 00 01 00 00 00 00 00 18 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00', 'invalid-program', 'jump target 2 is the second slot of an lddw'],
    ['an unknown opcode', 'ff 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00', 'invalid-program', 'unknown opcode 0xff'],
  ])('refuses %s', (_what, bytes, code, message) => {
    const r = loadProgram(hex(bytes as string), new Vm().loadOptions());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe(code);
    expect(r.diagnostics[0]?.message).toBe(message);
  });

  it('loadProgramOrThrow throws a VmError with the diagnostics', () => {
    expect(() => loadProgramOrThrow(hex('20 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00'), new Vm().loadOptions())).toThrow(VmError);
    try {
      loadProgramOrThrow(new Uint8Array(7), new Vm().loadOptions());
    } catch (e) {
      expect(isVmError(e, 'invalid-program')).toBe(true);
      expect((e as Error).message).toBe('load program: 0: () program length 7 is not a multiple of 8 bytes');
    }
  });
});

describe('BPF-to-BPF calls', () => {
  it('preserve r6-r9 and give the callee its own stack frame', () => {
    const { vm, status } = runText(`
      r6 = 6
      r9 = 9
      *(u64 *)(r10 - 8) = 111
      r1 = 5
      call f
      r0 += r6
      r0 += r9
      r1 = *(u64 *)(r10 - 8)
      r0 += r1
      exit
    f:
      r6 = 1000
      r9 = 1000
      *(u64 *)(r10 - 8) = 222
      r0 = *(u64 *)(r10 - 8)
      r0 += r1
      exit`);
    expect(status).toBe(RunStatus.ok);
    expect(vm.r0).toBe(222n + 5n + 6n + 9n + 111n);
  });

  it('a stack fault names the accessible window', () => {
    const { vm } = runText('r0 = *(u64 *)(r10 - 520)\nexit');
    expect(vm.fault?.message).toBe(
      'memory fault: 8-byte access at 0x2_00000df8 outside region stack bytes [3584, 4096) (the current frame and its callers) at pc 0 (r0 = *(u64 *)(r10 - 520); 79 a0 f8 fd 00 00 00 00)',
    );
  });

  it('fault past 8 frames', () => {
    const { vm, status } = runText('call f\nexit\nf:\ncall f\nexit');
    expect(status).toBe(RunStatus.fault);
    expect(vm.fault?.message).toMatch(/^call stack deeper than 8 frames at pc 2/);
  });
});

describe('tail calls', () => {
  it('run the target program and stop after 33', () => {
    const { vm, maps, programs } = loadAssembly(`
      .map progs prog_array key=4 value=4 entries=2
      r6 = *(u64 *)(r10 - 8)
      r6 += 1
      *(u64 *)(r10 - 8) = r6
      r2 = progs ll
      r3 = 0
      call bpf_tail_call
      r0 = *(u64 *)(r10 - 8)
      exit`);
    const program = [...programs.values()][0]!;
    (maps.get('progs') as ProgArray).setSlot(0, program);
    // the stack survives a tail call (same frame), so the count is the number of runs
    expect(vm.run(program, new Uint8Array(0))).toBe(RunStatus.ok);
    expect(vm.r0).toBe(34n);
    expect(vm.tailCalls).toBe(33);
  });

  it('fall through when the slot is empty', () => {
    const { vm, programs } = loadAssembly(`
      .map progs prog_array key=4 value=4 entries=2
      r2 = progs ll
      r3 = 1
      call bpf_tail_call
      r0 = 7
      exit`);
    expect(vm.run([...programs.values()][0]!, new Uint8Array(0))).toBe(RunStatus.ok);
    expect(vm.r0).toBe(7n);
  });
});

describe('the compiled tier', () => {
  it.each([
    ['a counted loop', 'r0 = 0\nr1 = 100\nl: r0 += r1\nr1 += -1\nif r1 != 0 goto l\nexit', 1000],
    ['nested loops', 'r0 = 0\nr2 = 10\no: r1 = 10\ni: r0 += 1\nr1 += -1\nif r1 s> 0 goto i\nr2 += -1\nif r2 != 0 goto o\nexit', 1000],
    ['a loop cut by the budget', 'r0 = 0\nl: r0 += 1\nif r0 != 0 goto l\nexit', 500],
    ['a 32-bit shift result used signed (locals stay int32)', 'r2 = 0xf8c289df ll\nw2 >>= 0\nw2 s%= -2\nr0 = r2\nr3 = 0xf0000000 ll\nr3 >>= 32\nr3 s/= -1\nr0 += r3\nexit', 100],
    ['a fault inside a loop', 'r0 = 0\nr2 = r1\nl: r3 = *(u8 *)(r2 + 0)\nr2 += 1\nr0 += 1\nif r0 != 100 goto l\nexit', 1000],
  ])('agrees with the interpreter on %s (r0, count, outcome)', (_what, text, budget) => {
    const results = (['interpreter', 'compiled'] as const).map((tier) => {
      const vm = new Vm({ tier, budget: budget as number });
      const status = vm.run(loadProgramOrThrow(asm(text as string), vm.loadOptions()), new Uint8Array(16));
      return { status, r0: vm.r0, count: vm.insnCount, fault: vm.fault?.message };
    });
    expect(results[1]).toEqual(results[0]);
  });
});

describe('the context of a run', () => {
  it.each(['compiled', 'interpreter'] as const)('is the record at its offset in a larger buffer, from buffer to buffer (%s)', (tier) => {
    const vm = new Vm({ tier });
    // r0 = the record's last word (r2 = its length), read at an offset the record ends on
    const program = loadProgramOrThrow(asm('r0 = *(u32 *)(r1 + 20)\nexit'), vm.loadOptions());
    const pages = [0, 1, 2].map((p) => Uint8Array.from({ length: 8192 }, (_, i) => (i * 7 + p * 13) & 0xff));
    const word = (b: Uint8Array, at: number) => BigInt(new DataView(b.buffer, b.byteOffset).getUint32(at, true));
    // aligned and unaligned offsets, three buffers in turn (more than the view cache holds)
    for (const at of [0, 4, 5, 4096, 8168]) {
      for (const page of pages) {
        expect(vm.run(program, page, at, 24)).toBe(RunStatus.ok);
        expect(vm.r0).toBe(word(page, at + 20));
      }
    }
    // a subarray view: its own byte offset counts
    const view = pages[1]!.subarray(12);
    expect(vm.run(program, view, 8, 24)).toBe(RunStatus.ok);
    expect(vm.r0).toBe(word(pages[1]!, 12 + 8 + 20));
    // a record of 22 bytes: the word at 20 crosses its end and faults, whatever the buffer holds after it
    expect(vm.run(program, pages[0]!, 100, 22)).toBe(RunStatus.fault);
  });
});

describe.each(['interpreter', 'compiled'] as const)('per-run state (%s)', (tier) => {
  it('frame 0 is zero at the start of every run, whichever programs ran before', () => {
    const vm = new Vm({ tier });
    const load = (text: string) => loadProgramOrThrow(asm(text), vm.loadOptions());
    const write = load('r1 = 77\n*(u64 *)(r10 - 8) = r1\n*(u64 *)(r10 - 512) = r1\nr0 = 0\nexit');
    // names no r10 and calls no helper: cannot reach the stack
    const noStack = load('r0 = *(u32 *)(r1 + 0)\nexit');
    const read = load('r0 = *(u64 *)(r10 - 8)\nr2 = *(u64 *)(r10 - 512)\nr0 += r2\nexit');
    const ctx = new Uint8Array([1, 2, 3, 4]);
    const frame0 = () => [...(vm.regionBytes[2] as Uint8Array).subarray(4096 - 512, 4096)];
    for (const between of [[], [noStack], [noStack, noStack], [write, noStack]]) {
      vm.run(write, ctx);
      expect(frame0().some((b) => b !== 0)).toBe(true);
      for (const p of between) vm.run(p, ctx);
      expect(vm.runOrThrow(read, ctx)).toBe(0n);
      vm.run(noStack, ctx);
      expect(frame0().every((b) => b === 0)).toBe(true);
    }
    expect(vm.tierOf(read)).toBe(tier);
  });

  it('a compiled run starts from r1 = the context, r2 = its length, the rest 0', () => {
    const vm = new Vm({ tier });
    const dirty = loadProgramOrThrow(asm('r0 = -1\nr3 = -1\nr4 = -1\nr5 = -1\nr6 = -1\nr7 = -1\nr8 = -1\nr9 = -1\nexit'), vm.loadOptions());
    const sum = loadProgramOrThrow(
      asm('r0 = r2\nr0 += r3\nr0 += r4\nr0 += r5\nr0 += r6\nr0 += r7\nr0 += r8\nr0 += r9\nr1 = *(u8 *)(r1 + 2)\nr0 += r1\nexit'),
      vm.loadOptions(),
    );
    for (const len of [3, 40, 3]) {
      const ctx = Uint8Array.from({ length: len }, (_, i) => i * 5);
      vm.run(dirty, ctx);
      expect(vm.runOrThrow(sum, ctx)).toBe(BigInt(len + 10));
      // the same program twice in a row (the compiled tier's hot entry)
      expect(vm.runOrThrow(sum, ctx)).toBe(BigInt(len + 10));
      expect(vm.regLo[1]).toBe(10);
      expect(vm.regLo[2]).toBe(len);
    }
  });
});
