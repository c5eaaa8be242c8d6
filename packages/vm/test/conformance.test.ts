import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProgram, RunStatus, unwindTestHelper, Vm, type VmTier } from '../src/index.js';
import { type ConformanceCase, corpusRoot, programBytes, readCases } from './conformance-corpus.js';

// bpf_conformance over the shared corpus: every test must pass at CPU v4. Helper 5 is uBPF's
// "unwind" test helper here (the harness's, not the VM's: in the kernel 5 is ktime_get_ns).
const folder = corpusRoot ? join(corpusRoot, 'bpf-conformance') : undefined;
const present = folder !== undefined && existsSync(join(folder, 'tests'));
if (!present) console.log('conformance: skipped: the shared corpus (bpf-conformance/tests) is absent');

type Outcome = { kind: 'refused'; message: string } | { kind: 'ran'; status: RunStatus; r0: bigint; fault?: string; tier: VmTier };

function execute(c: ConformanceCase, tier: VmTier = 'interpreter'): Outcome {
  let bytes: Uint8Array;
  try {
    bytes = programBytes(c);
  } catch (e) {
    return { kind: 'refused', message: `assemble: ${(e as Error).message}` };
  }
  const vm = new Vm({ standardHelpers: false, helpers: new Map([[5, unwindTestHelper]]), tier });
  const loaded = loadProgram(bytes, vm.loadOptions(c.name));
  if (!loaded.ok) return { kind: 'refused', message: loaded.diagnostics.map((d) => d.message).join('; ') };
  const status = vm.run(loaded.program, c.mem);
  return { kind: 'ran', status, r0: vm.r0, fault: vm.fault?.message, tier: vm.tierOf(loaded.program) };
}

describe.skipIf(!present)('bpf_conformance tests', () => {
  const cases = present ? readCases(join(folder as string, 'tests')) : [];
  const kernel = new Map<string, string>();
  if (present) {
    for (const line of readFileSync(join(folder as string, 'kernel-6.18-results.tsv'), 'utf8').split('\n')) {
      const [name, verdict] = line.split('\t');
      if (name && verdict) kernel.set(name, verdict);
    }
  }

  it('has the 313 tests of the corpus', () => {
    expect(cases.length).toBe(313);
  });

  it.each(cases.flatMap((c) => (['interpreter', 'compiled'] as const).map((t) => [c.name, t, c] as const)))('%s (%s)', (_name, tier, c) => {
    const r = execute(c, tier);
    if (c.error !== undefined) {
      expect(r.kind).toBe('refused');
      return;
    }
    expect(r.kind === 'ran' ? r.fault : r.message).toBeUndefined();
    expect(r.kind).toBe('ran');
    if (r.kind !== 'ran') return;
    expect(r.status).toBe(RunStatus.ok);
    // the compiled tier must really run it, not fall back to the interpreter
    expect(r.tier).toBe(tier);
    expect(`0x${r.r0.toString(16)}`).toBe(`0x${(c.result ?? 0n).toString(16)}`);
  });

  it.each(['interpreter', 'compiled'] as const)('reports counts (%s), beside the kernel 6.18 verdicts', (tier) => {
    let pass = 0;
    let onTier = 0;
    const kernelFailsWePass: string[] = [];
    for (const c of cases) {
      const r = execute(c, tier);
      const ok = c.error !== undefined ? r.kind === 'refused' : r.kind === 'ran' && r.status === RunStatus.ok && r.r0 === c.result;
      if (ok) pass++;
      if (r.kind === 'ran' && r.tier === tier) onTier++;
      if (ok && kernel.get(c.name) === 'FAIL') kernelFailsWePass.push(c.name);
    }
    const kernelPass = [...kernel.values()].filter((v) => v === 'PASS').length;
    console.log(
      `conformance (${tier}): ${pass}/${cases.length} pass, ${onTier} ran on the ${tier} tier (kernel 6.18: ${kernelPass}/${kernel.size}); ` +
        `passing here, refused by the kernel: ${kernelFailsWePass.join(', ')}`,
    );
    expect(pass).toBe(cases.length);
  });
});

describe.skipIf(!present)('bpf_conformance negative tests (each must not pass)', () => {
  const cases = present ? readCases(join(folder as string, 'negative')) : [];
  it.each(cases.flatMap((c) => (['interpreter', 'compiled'] as const).map((t) => [c.name, t, c] as const)))('%s (%s)', (_name, tier, c) => {
    const r = execute(c, tier);
    if (c.raw && c.error !== undefined) {
      // reserved-field encodings: refused by the loader
      expect(r.kind).toBe('refused');
      return;
    }
    if (c.result !== undefined) {
      // a wrong expected value: the VM's r0 must differ
      expect(r.kind === 'ran' && r.r0 === c.result).toBe(false);
      return;
    }
    if (c.error !== undefined) {
      // an expected error the VM does not produce (error.data), or an assembler refusal
      const passed = r.kind === 'refused' && r.message === c.error;
      expect(passed).toBe(false);
      return;
    }
    // no instructions at all
    expect(r.kind).toBe('refused');
  });
});
