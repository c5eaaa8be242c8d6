// The running kernel's BTF (/sys/kernel/btf/vmlinux: ~127k types with ENUM64, FWD, DECL_TAG,
// TYPE_TAG, FLOAT, that clang 14 objects lack) against `bpftool btf dump file` of the same blob.
// Skips, saying why, when the kernel exposes no BTF or bpftool is not installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeBtf } from '../src/btf/btf-spec.js';
import { formatBtfType } from '../src/btf/format-btf-type.js';
import { bpftoolDump } from './support/bpftool-format.js';

const path = '/sys/kernel/btf/vmlinux';
const hasBtf = existsSync(path);
const bpftool = hasBtf ? spawnSync('bpftool', ['btf', 'dump', 'file', path], { encoding: 'utf8', maxBuffer: 1 << 30 }) : undefined;
const hasBpftool = bpftool !== undefined && bpftool.status === 0;
const reason = !hasBtf ? `${path} is absent (kernel without CONFIG_DEBUG_INFO_BTF)` : !hasBpftool ? 'bpftool is not installed or failed' : '';
if (reason !== '') console.warn(`skipping kernel BTF tests: ${reason}`);

describe.skipIf(reason !== '')('kernel BTF', () => {
  const btf = reason === '' ? decodeBtf(new Uint8Array(readFileSync(path))) : undefined;
  const spec = () => btf as NonNullable<typeof btf>;

  it('every type reads exactly as bpftool dumps it', { timeout: 180_000 }, () => {
    expect(spec().typeCount).toBeGreaterThan(10_000);
    const mine = bpftoolDump(spec()).split('\n');
    const theirs = (bpftool?.stdout ?? '').split('\n');
    expect(mine.length).toBe(theirs.length);
    const diffs = mine.flatMap((line, i) => (line === theirs[i] ? [] : [`${i}: ${line} | ${theirs[i]}`]));
    expect(diffs.slice(0, 10)).toEqual([]);
  });

  it("the kernel's own tracepoint record struct prints as C", () => {
    const t = spec().typeByName('trace_event_raw_sched_switch', 'struct');
    expect(formatBtfType(spec(), t.id)).toMatch(/^struct trace_event_raw_sched_switch \{\n\tstruct trace_entry ent;\n\tchar prev_comm\[16\];\n\tpid_t prev_pid;/);
    expect(spec().member(t.id, 'next_pid')?.bitOffset).toBe(56 * 8);
  });

  it('every type pretty-prints without error', { timeout: 180_000 }, () => {
    let printed = 0;
    for (let id = 1; id < spec().typeCount; id++) if (formatBtfType(spec(), id).length > 0) printed++;
    expect(printed).toBe(spec().typeCount - 1);
  });
});
