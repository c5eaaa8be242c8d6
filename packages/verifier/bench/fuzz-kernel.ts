// Differential fuzzing against the running kernel's verifier: random and mutated tracepoint
// programs go to both; prints agreement and every program we accept that the kernel rejects for a
// memory-safety reason (must be none), and how many instructions each side processed on the
// programs both accept (ours / kernel). Every tracepoint program we accept is also run (as
// `sanitizeVerified` rewrites it: dead code becomes `ja -1`, exit offsets 0) in
// packages/vm, on both tiers, over random records: none may fault (the verifier's proof is what
// lets the agent run it). Needs root (bpf()) and gcc. `--xdp` fuzzes XDP programs instead
// (packet pointers: data, data_end, data_meta, comparisons, packet reads and writes; the VM has
// no XDP context, so those are not run). Random tracepoint programs also call the helpers of
// packages/vm's tracing-helpers.ts on a stack trace map, a queue, a stack and a perf event array.
//   pnpm --filter @probeyard/verifier fuzz:kernel -- --count 10000 [--seed 1] [--show 10] [--xdp]
import { parseArgs } from 'node:util';
import { createMap, loadProgram, type MapType, RunStatus, Vm, type VmTier } from '@probeyard/vm';
import { type MapDef, encodeInsns, type RawInsn, sanitizeVerified, verify } from '../src/index.js';
import { KernelLoader } from '../src/node/index.js';
import { asm } from '../test/support.js';
import { ACCEPTED, PACKET_ACCEPTED } from '../test/programs.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    count: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    show: { type: 'string', default: '10' },
    examples: { type: 'boolean', default: false },
    xdp: { type: 'boolean', default: false },
  },
});
const xdp = values.xdp;

/** xorshift32: the same programs for the same seed. */
let state = Number(values.seed) >>> 0 || 1;
function rnd(n: number): number {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state % n;
}
const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;

const MAPS: MapDef[] = [
  { type: 1, keySize: 4, valueSize: 16, maxEntries: 64 },
  { type: 2, keySize: 4, valueSize: 32, maxEntries: 4 },
  { type: 27, keySize: 0, valueSize: 0, maxEntries: 4096 },
  // for tracingSnippet: a stack trace map, a queue, a stack, a perf event array
  { type: 7, keySize: 4, valueSize: 64, maxEntries: 16 },
  { type: 22, keySize: 0, valueSize: 8, maxEntries: 4 },
  { type: 23, keySize: 0, valueSize: 16, maxEntries: 4 },
  { type: 4, keySize: 4, valueSize: 4, maxEntries: 4 },
];

const IMMS = [0, 1, 2, 4, 7, 8, 15, 16, 31, 32, 63, 64, 255, -1, -8, -16, 0x7fffffff, -0x80000000];
const OFFS = [-512, -64, -32, -16, -8, -4, -2, -1, 0, 1, 2, 4, 8, 12, 16, 24, 32, 40, 56, 64];

/** A short snippet of plausible code (so that paths reach interesting checks). */
function snippet(out: RawInsn[]): void {
  const r = () => rnd(10);
  if (xdp && rnd(2)) {
    packetSnippet(out);
    return;
  }
  switch (rnd(14)) {
    case 0: // ALU64 imm
      out.push({ opcode: (pick([0, 1, 2, 4, 5, 6, 7, 0xa, 0xb, 0xc]) << 4) | 0x07, dst: r(), imm: pick(IMMS) & (rnd(2) ? 63 : -1) });
      break;
    case 1: // ALU64 reg
      out.push({ opcode: (pick([0, 1, 2, 4, 5, 0xa, 0xb]) << 4) | 0x0f, dst: r(), src: rnd(11) });
      break;
    case 2: // ALU32
      out.push({ opcode: (pick([0, 1, 4, 5, 6, 7, 0xb]) << 4) | pick([0x04, 0x0c]), dst: r(), src: r(), imm: rnd(32) });
      break;
    case 3: // stack store
      out.push({ opcode: pick([0x7b, 0x63, 0x6b, 0x73]), dst: 10, src: r(), off: pick([-8, -16, -24, -4, -2, -1, -32, -512, -520, 0]) });
      break;
    case 4: // stack load
      out.push({ opcode: pick([0x79, 0x61, 0x69, 0x71]), dst: r(), src: 10, off: pick([-8, -16, -24, -4, -2, -32, -512]) });
      break;
    case 5: // ctx load
      out.push({ opcode: pick([0x79, 0x61, 0x69, 0x71]), dst: r(), src: 1, off: pick([0, 4, 8, 12, 16, 24, 28, 32, 40, 56, 60, 64, 8190, 8192]) });
      break;
    case 6: // load through some register
      out.push({ opcode: pick([0x79, 0x61, 0x69, 0x71]), dst: r(), src: r(), off: pick(OFFS) });
      break;
    case 7: // store through some register
      out.push({ opcode: pick([0x7b, 0x63, 0x62, 0x7a]), dst: r(), src: r(), off: pick(OFFS), imm: pick(IMMS) });
      break;
    case 8: { // map lookup with a stack key
      out.push({ opcode: 0x62, dst: 10, off: -8, imm: rnd(4) });
      out.push({ opcode: 0xbf, dst: 2, src: 10 }, { opcode: 0x07, dst: 2, imm: -8 });
      out.push({ opcode: 0x18, dst: 1, src: 1, imm: rnd(2) }, { opcode: 0 });
      out.push({ opcode: 0x85, imm: 1 });
      break;
    }
    case 9: // ringbuf reserve
      out.push({ opcode: 0x18, dst: 1, src: 1, imm: 2 }, { opcode: 0 });
      out.push({ opcode: 0xb7, dst: 2, imm: pick([8, 16, 0, 7]) }, { opcode: 0xb7, dst: 3, imm: 0 });
      out.push({ opcode: 0x85, imm: 131 });
      break;
    case 10: // ringbuf submit/discard of r0 or a saved register
      out.push({ opcode: 0xbf, dst: 1, src: pick([0, 6, 7]) }, { opcode: 0xb7, dst: 2, imm: 0 }, { opcode: 0x85, imm: pick([132, 133]) });
      break;
    case 11: // save r0
      out.push({ opcode: 0xbf, dst: pick([6, 7, 8]), src: 0 });
      break;
    case 12: // pointer arithmetic
      out.push({ opcode: 0x0f, dst: pick([0, 1, 6, 7, 10 - 8]), src: r() });
      break;
    default: // helpers without memory, or (tracepoints) one of tracingSnippet's
      if (!xdp && rnd(3) === 0) tracingSnippet(out);
      else out.push({ opcode: 0x85, imm: pick(xdp ? [5, 7, 8] : [5, 7, 8, 14]) });
  }
}

/** Tracepoint helpers on maps 3..6 (stack trace, queue, stack, perf event array) and a buffer on the stack. */
function tracingSnippet(out: RawInsn[]): void {
  const map = (i: number) => [{ opcode: 0x18, dst: 1, src: 1, imm: i }, { opcode: 0 }];
  switch (rnd(6)) {
    case 0: // push r6 or a constant onto the queue or the stack map
      out.push({ opcode: 0x7a, dst: 10, off: -16, imm: pick(IMMS) }, { opcode: 0x7b, dst: 10, src: pick([6, 10]), off: -8 });
      out.push(...map(4 + rnd(2)), { opcode: 0xbf, dst: 2, src: 10 }, { opcode: 0x07, dst: 2, imm: pick([-16, -16, -8]) });
      out.push({ opcode: 0xb7, dst: 3, imm: pick([0, 2, 2, 1, -1]) }, { opcode: 0x85, imm: 87 });
      break;
    case 1: // pop or peek into the stack
      out.push(...map(4 + rnd(2)), { opcode: 0xbf, dst: 2, src: 10 }, { opcode: 0x07, dst: 2, imm: pick([-16, -16, -8, -24]) });
      out.push({ opcode: 0x85, imm: pick([88, 89]) });
      break;
    case 2: // get_stackid(ctx?, stack trace map, flags)
      out.push({ opcode: 0x18, dst: 2, src: 1, imm: 3 }, { opcode: 0 }, { opcode: 0xb7, dst: 3, imm: pick([0, 0x100, 0x2ff, 0x800, -1]) });
      out.push({ opcode: 0x85, imm: 27 });
      break;
    case 3: // get_stack(ctx?, stack buffer, size, flags)
      out.push({ opcode: 0xbf, dst: 2, src: 10 }, { opcode: 0x07, dst: 2, imm: pick([-64, -32, -8]) });
      out.push({ opcode: 0xb7, dst: 3, imm: pick([64, 32, 12, 0, 8]) }, { opcode: 0xb7, dst: 4, imm: pick([0, 0x100, 0x900, 0x800, 3]) });
      out.push({ opcode: 0x85, imm: 67 });
      break;
    case 4: // perf_event_read(_value) on the perf event array
      out.push(...map(6), { opcode: 0xb7, dst: 2, imm: pick([0, 3, 4, -1]) });
      if (rnd(2)) out.push({ opcode: 0x85, imm: 22 });
      else out.push({ opcode: 0xbf, dst: 3, src: 10 }, { opcode: 0x07, dst: 3, imm: -24 }, { opcode: 0xb7, dst: 4, imm: pick([24, 16]) }, { opcode: 0x85, imm: 55 });
      break;
    default: // helpers without arguments, the ctx-only cookie, signals
      out.push({ opcode: 0xb7, dst: 1, imm: pick([0, 9, 65]) });
      out.push({ opcode: 0x85, imm: pick([35, 80, 118, 160, 208, 174, 109, 117]) /* 160: refused by both */ });
  }
}

/** XDP: r2..r5 and r7 hold packet pointers (data, data_end, data_meta) and derived ones. */
function packetSnippet(out: RawInsn[]): void {
  const p = () => pick([2, 3, 4, 5, 7]);
  switch (rnd(8)) {
    case 0: // reload a pointer field (data, data_end, data_meta, or another field)
      out.push({ opcode: pick([0x61, 0x61, 0x79, 0x69]), dst: p(), src: 1, off: pick([0, 4, 8, 12, 16, 20, 24, 2]) });
      break;
    case 1: // copy, then a constant offset
      out.push({ opcode: 0xbf, dst: p(), src: p() }, { opcode: 0x07, dst: p(), imm: pick([1, 2, 4, 8, 14, 20, -1, -4, 0x10000]) });
      break;
    case 2: // a variable offset (masked packet byte or an unknown register)
      out.push({ opcode: 0x71, dst: 6, src: p(), off: pick([0, 1, 12]) });
      out.push({ opcode: 0x57, dst: 6, imm: pick([7, 15, 255, -1]) });
      out.push({ opcode: pick([0x0f, 0x1f]), dst: p(), src: 6 });
      break;
    case 3: // a comparison of two packet pointers, any operator, 64 or 32 bits
      out.push({ opcode: (pick([1, 2, 3, 5, 0xa, 0xb, 6, 7, 0xc, 0xd]) << 4) | pick([0x0d, 0x0d, 0x0e]), dst: p(), src: p(), off: 1 + rnd(3) });
      break;
    case 4: // packet load
      out.push({ opcode: pick([0x79, 0x61, 0x69, 0x71]), dst: pick([0, 6, 8]), src: p(), off: pick([0, 1, 2, 4, 8, 12, 13, 14, -1, -8]) });
      break;
    case 5: // packet store
      out.push({ opcode: pick([0x7b, 0x63, 0x62, 0x72]), dst: p(), src: pick([0, 6, 8]), off: pick([0, 1, 4, 8, 13, -1]), imm: 1 });
      break;
    case 6: // packet bytes as a map key
      out.push({ opcode: 0xbf, dst: 2, src: p() }, { opcode: 0x18, dst: 1, src: 1, imm: 0 }, { opcode: 0 }, { opcode: 0x85, imm: 1 });
      break;
    default: // spill and fill a packet pointer
      out.push({ opcode: 0x7b, dst: 10, src: p(), off: -16 }, { opcode: 0x79, dst: p(), src: 10, off: pick([-16, -16, -12]) });
  }
}

function randomProgram(): RawInsn[] {
  const out: RawInsn[] = [];
  if (xdp) {
    // r2 = data, r3 = data_end, r4 = data_meta
    out.push({ opcode: 0x61, dst: 2, src: 1, off: 0 }, { opcode: 0x61, dst: 3, src: 1, off: 4 }, { opcode: 0x61, dst: 4, src: 1, off: 8 });
  }
  const n = 2 + rnd(10);
  for (let k = 0; k < n; k++) {
    if (rnd(5) === 0 && out.length > 0) {
      // a forward conditional jump over the next snippet, or a short backward one
      const jmp: RawInsn = { opcode: (pick([1, 2, 3, 5, 0xa, 0xb, 6, 0xc]) << 4) | pick([0x05, 0x06]), dst: rnd(10), imm: pick(IMMS) };
      out.push(jmp);
      const before = out.length;
      snippet(out);
      jmp.off = rnd(8) === 0 ? -(1 + rnd(Math.min(out.length - 1, 4))) : out.length - before;
    } else snippet(out);
  }
  if (rnd(4)) out.push({ opcode: 0xb7, dst: 0, imm: 0 });
  out.push({ opcode: 0x95 });
  return out;
}

// seeds the kernel can load as they are (the loader gives programs with subprograms a minimal BTF)
const seeds = (xdp ? PACKET_ACCEPTED : ACCEPTED).filter((c) => !c.notKernel).map((c) => asm(c.source));

function mutated(): { bytes: Uint8Array; maps: MapDef[] } {
  const seed = pick(seeds);
  const bytes = seed.bytes.slice();
  const view = new DataView(bytes.buffer);
  const mutations = 1 + rnd(3);
  for (let k = 0; k < mutations; k++) {
    const at = rnd(bytes.length / 8) * 8;
    if (bytes[at - 8] === 0x18 && at > 0) continue; // keep lddw halves
    switch (rnd(4)) {
      case 0:
        view.setInt32(at + 4, pick(IMMS), true);
        break;
      case 1:
        view.setInt16(at + 2, pick(OFFS), true);
        break;
      case 2:
        bytes[at + 1] = (rnd(11) << 4) | rnd(11);
        break;
      default: {
        const op = bytes[at]!;
        if ((op & 7) === 5 && op !== 0x85 && op !== 0x95) bytes[at] = (pick([1, 2, 3, 5, 0xa, 0xb]) << 4) | (op & 0x0f);
      }
    }
  }
  return { bytes, maps: seed.maps };
}

const SAFETY = [
  'invalid mem access',
  'invalid access to',
  'invalid bpf_context access',
  'min value is negative',
  'unbounded memory access',
  'invalid read from stack',
  'invalid write to stack',
  '!read_ok',
  'outside of the allowed memory range',
  'invalid indirect',
  'type=',
  'Unreleased reference',
  'reference leak',
  'pointer arithmetic',
  'misaligned',
  'leaks addr',
  'dereference of modified',
  'invalid size of register',
  'invalid zero-sized',
  'ref_obj_id',
  'must have zero offset',
  'expected=',
  'outside of the packet',
  'pkt_end',
];
const isSafety = (msg: string) => SAFETY.some((s) => msg.includes(s));

const opened = await KernelLoader.open();
if ('unavailable' in opened) {
  console.log(`fuzz:kernel: cannot run: ${opened.unavailable}`);
  process.exit(0);
}
const kernel = opened;
const count = Number(values.count);
const show = Number(values.show);
const tally = {
  bothAccept: 0,
  bothReject: 0,
  weAcceptKernelRejects: 0,
  unsafeAccepts: 0,
  weRejectKernelAccepts: 0,
  /** accepted programs where precision cut the processed instructions */
  precisionPruned: 0,
  /** accepted only with precision (a pruning bug unless the exact run hit a limit) */
  precisionOnly: 0,
};
/** Runs of accepted programs in packages/vm, by outcome. */
const vmTally = { programs: 0, runs: 0, ok: 0, budget: 0, faults: 0, refused: 0, lacking: 0, negativeCtx: 0 };
const vmFaults: string[] = [];
/** Accepted programs the VM does not load because it lacks a helper or feature, by what it lacks. */
const vmLacks = new Map<string, number>();
// A tracepoint context may be read anywhere in [8, 8192) (PERF_MAX_TRACE_SIZE): a record that big.
const record = new Uint8Array(8192);
/** Runs an accepted program in the VM on both tiers, 4 records each; counts faults. */
function runInVm(bytes: Uint8Array, maps: readonly MapDef[]): void {
  vmTally.programs++;
  for (const tier of ['compiled', 'interpreter'] as VmTier[]) {
    const vm = new Vm({ tier, maps: maps.map((m, i) => createMap({ name: `m${i}`, type: m.type as MapType, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, flags: 0 })) });
    const loaded = loadProgram(bytes, vm.loadOptions('fuzz'));
    if (!loaded.ok) {
      // a helper or feature the VM does not provide is a gap of the VM's, named at load (the
      // agent refuses such a program); any other refusal is a disagreement with the verifier
      const lacks = loaded.diagnostics.filter((d) => /^unknown helper|not supported/.test(d.message));
      if (lacks.length === loaded.diagnostics.length) {
        vmTally.lacking++;
        for (const d of lacks) {
          const what = d.message.replace(/^unknown helper \d+ \((.*)\)$/, 'helper $1').replace(/ \d+ is not supported/, ' is not supported');
          vmLacks.set(what, (vmLacks.get(what) ?? 0) + 1);
        }
      } else {
        vmTally.refused++;
        const why = loaded.diagnostics.map((d) => `${d.insnIndex}: (${d.insnText}) ${d.message}`).join('; ');
        if (vmFaults.length < show) vmFaults.push(`${Buffer.from(bytes).toString('hex')}\n  vm refused to load it: ${why}`);
      }
      return;
    }
    const program = loaded.program;
    for (let k = 0; k < 4; k++) {
      for (let i = 0; i < record.length; i++) record[i] = rnd(256);
      vmTally.runs++;
      const status = vm.run(program, record);
      if (status === RunStatus.ok) vmTally.ok++;
      else if (status === RunStatus.budgetExhausted) vmTally.budget++;
      else {
        vmTally.faults++;
        if (vmFaults.length < show) vmFaults.push(`${Buffer.from(bytes).toString('hex')}\n  vm (${tier}) faulted: ${vm.fault?.message}`);
      }
    }
  }
}

const reasons = new Map<string, number>();
const unsafe: string[] = [];
const examples = new Map<string, string>();
/** ours / kernel processed instructions of each program both accept, and programs over 2x. */
const processedRatios: number[] = [];
const over2x: string[] = [];
let ourMs = 0;
let exactMs = 0;
let kernelUs = 0;
for (let n = 0; n < count; n++) {
  if (n % 1000 === 0 && n > 0) process.stderr.write(`${n} programs\n`);
  const prog = rnd(2) ? { bytes: encodeInsns(randomProgram()), maps: MAPS } : mutated();
  const t = performance.now();
  const ours = verify(prog.bytes, { maps: prog.maps, timeLimitMs: 10_000, ...(xdp ? { context: { kind: 'xdp' as const } } : {}) });
  ourMs += performance.now() - t;
  // the pruning itself: precision must never accept what exploring every scalar by range rejects
  if (ours.ok) {
    const te = performance.now();
    const exact = verify(prog.bytes, {
      maps: prog.maps,
      insnLimit: 50_000,
      timeLimitMs: 1_000,
      precision: false,
      ...(xdp ? { context: { kind: 'xdp' as const } } : {}),
    });
    exactMs += performance.now() - te;
    if (exact.stats.insnsProcessed > ours.stats.insnsProcessed) tally.precisionPruned++;
    if (!exact.ok && !/too large|time limit/.test(exact.diagnostics[0]!.message)) {
      tally.precisionOnly++;
      if (unsafe.length < show) unsafe.push(`${Buffer.from(prog.bytes).toString('hex')}\n  accepted only with precision; without: ${exact.diagnostics[0]!.message}`);
    }
  }
  // as the kernel rewrites a verified program: dead code becomes `ja -1`, exit offsets 0
  // a ctx read at a negative offset is accepted as Linux does, and the VM faults it (warnings)
  if (ours.ok && !xdp && ours.warnings.length > 0) vmTally.negativeCtx++;
  else if (ours.ok && !xdp) runInVm(sanitizeVerified(prog.bytes, ours), prog.maps);
  const k = await kernel.load(prog.bytes, prog.maps, xdp ? 6 : 5);
  kernelUs += k.verificationUsec ?? 0;
  if (ours.ok && k.ok) {
    tally.bothAccept++;
    if (k.insnsProcessed) {
      const r = ours.stats.insnsProcessed / k.insnsProcessed;
      processedRatios.push(r);
      if (r > 2 && over2x.length < show) over2x.push(`${Buffer.from(prog.bytes).toString('hex')}
  processed: ours ${ours.stats.insnsProcessed}, kernel ${k.insnsProcessed}`);
    }
  } else if (!ours.ok && !k.ok) tally.bothReject++;
  else if (ours.ok) {
    tally.weAcceptKernelRejects++;
    const key = `we accept, kernel: ${k.message.replace(/\d+/g, 'N')}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
    if (isSafety(k.message)) {
      tally.unsafeAccepts++;
      if (unsafe.length < show) unsafe.push(`${Buffer.from(prog.bytes).toString('hex')}\n  kernel: ${k.message}`);
    }
  } else {
    tally.weRejectKernelAccepts++;
    const key = `we reject: ${ours.diagnostics[0]!.message.replace(/\d+/g, 'N')}`;
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
    if (!examples.has(key)) examples.set(key, Buffer.from(prog.bytes).toString('hex'));
  }
}
kernel.close();
const agree = tally.bothAccept + tally.bothReject;
console.log(`programs: ${count} (seed ${values.seed}${xdp ? ', xdp' : ''})`);
console.log(`agreement: ${agree}/${count} (${((agree / count) * 100).toFixed(2)}%)`);
console.log(`  both accept ${tally.bothAccept}, both reject ${tally.bothReject}`);
if (processedRatios.length) {
  const geo = Math.exp(processedRatios.reduce((a, r) => a + Math.log(r), 0) / processedRatios.length);
  const over = processedRatios.filter((r) => r > 2).length;
  console.log(
    `processed instructions ours / kernel (both accept): geometric mean ${geo.toFixed(2)}, min ${Math.min(...processedRatios).toFixed(2)}, max ${Math.max(...processedRatios).toFixed(2)}, over 2x: ${over}`,
  );
  for (const line of over2x) console.log(`  ${line}`);
}
console.log(`  we reject, kernel accepts: ${tally.weRejectKernelAccepts}`);
console.log(`  we accept, kernel rejects: ${tally.weAcceptKernelRejects} (memory-safety reason: ${tally.unsafeAccepts})`);
console.log(
  `precision: fewer instructions in ${tally.precisionPruned} accepted programs; accepted only with it: ${tally.precisionOnly} (check runs without it: ${exactMs.toFixed(0)} ms)`,
);
if (!xdp) {
  console.log(
    `vm: ${vmTally.programs} accepted programs; ${vmTally.runs} runs on both tiers: ${vmTally.ok} ok, ${vmTally.budget} out of budget, ${vmTally.faults} faults; refused at load: ${vmTally.refused}; not loaded for a helper or feature the VM lacks: ${vmTally.lacking}; not run (a ctx read at a negative offset, which the VM faults): ${vmTally.negativeCtx}`,
  );
  for (const [what, n] of [...vmLacks.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${n}  lacks ${what}`);
}
console.log(`time: ours ${ourMs.toFixed(0)} ms total, kernel ${(kernelUs / 1000).toFixed(0)} ms total (reported verification time)`);
const top = [...reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
if (top.length) console.log(`disagreements by reason:\n${top.map(([r, c]) => `  ${c}  ${r}`).join('\n')}`);
if (process.argv.includes('--examples')) for (const [k, v] of examples) console.log(`${k}\n  ${v}`);
if (unsafe.length) console.log(`UNSAFE ACCEPTS (first ${unsafe.length}):\n${unsafe.join('\n')}`);
if (vmFaults.length) console.log(`ACCEPTED BUT FAULTED OR REFUSED IN THE VM (first ${vmFaults.length}):\n${vmFaults.join('\n')}`);
process.exitCode = tally.unsafeAccepts > 0 || tally.precisionOnly > 0 || vmTally.faults > 0 || vmTally.refused > 0 ? 1 : 0;
