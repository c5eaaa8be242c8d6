// The deployment's options set in the spec the agent loads: by variable name, as the registry
// stored them (decimal text, true/false); what does not fit is a CompatError, never a crash; and
// the verdict is the object's with them (a set option prunes what it disables).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isCompatError, readProgramSpec } from '@probeyard/compat';
import { loadForProfile } from '@probeyard/runtime';
import { describe, expect, it } from 'vitest';
import { readTraceDatProfile } from '../profile/node-profile.js';
import { withOptions } from './target-manager.js';

const syscount = new URL('../../../../examples/libbpf/syscount.bpf.o', import.meta.url);

describe('withOptions', () => {
  it('sets .rodata variables by name and leaves the spec alone without options', async () => {
    const spec = await readProgramSpec(readFileSync(syscount));
    expect(withOptions(spec, undefined)).toBe(spec);
    expect(withOptions(spec, {})).toBe(spec);
    const set = withOptions(spec, { filter_pid: '-2', filter_failed: 'true' });
    const rodata = set.globals.find((g) => g.kind === 'rodata' && g.vars.some((v) => v.name === 'filter_pid'))!;
    const at = (name: string) => rodata.vars.find((v) => v.name === name)!;
    const bytes = rodata.bytes!;
    expect([...bytes.subarray(at('filter_pid').byteOffset, at('filter_pid').byteOffset + 4)]).toEqual([0xfe, 0xff, 0xff, 0xff]);
    expect(bytes[at('filter_failed').byteOffset]).toBe(1);
    // the artifact's own spec is not changed (other targets of the same digest share it)
    const original = spec.globals.find((g) => g.section === rodata.section)!.bytes!;
    expect(original[at('filter_failed').byteOffset]).toBe(0);
  });

  it('refuses a name or value that does not fit with a CompatError', async () => {
    const spec = await readProgramSpec(readFileSync(syscount));
    for (const options of [{ nope: '1' }, { filter_failed: '256' }] as Record<string, string>[]) {
      let err: unknown;
      try {
        withOptions(spec, options);
      } catch (e) {
        err = e;
      }
      expect(isCompatError(err)).toBe(true);
    }
  });
});

describe('the verdict of a target with options', () => {
  it('is for the object with them: a set min_duration_ns prunes bootstrap handle_exec\'s kernel reads', async () => {
    const profile = await readTraceDatProfile(fileURLToPath(new URL('../../../../examples/libbpf/recordings/libbpf-tools.dat', import.meta.url)));
    const spec = await readProgramSpec(readFileSync(new URL('../../../../examples/libbpf/bootstrap.bpf.o', import.meta.url)));
    // as the target manager loads it: options first, then loadForProfile on the node's kernel
    const plain = loadForProfile(withOptions(spec, {}), profile.kernel);
    const set = loadForProfile(withOptions(spec, { min_duration_ns: '1000000' }), profile.kernel);
    expect(plain.verdict.kernelMemory).toEqual(['handle_exec', 'handle_exit']);
    // handle_exec returns before BPF_CORE_READ(task, real_parent, tgid) when the option is set
    expect(set.verdict.kernelMemory).toEqual(['handle_exit']);
  });
});
