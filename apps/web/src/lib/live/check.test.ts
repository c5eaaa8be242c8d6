// The live editor's in-browser check, run here in Node on real format files: errors at their line,
// the fields read, and verdicts (compatible, relocated with the moves, incompatible with why).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseProvider } from '@probeyard/compat';
import { checkProgram, type FormatsAnswer } from './check';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));
const formatsDir = (tree: string) => `${root}packages/compat/test/fixtures/formats/${tree}`;

/** What `kernel.formatsFor` answers for a fixture tree (exact names only, as the tests need). */
function kernel(tree: string, complete = true): (events: string[]) => Promise<FormatsAnswer> {
  const all: { system: string; event: string; text: string }[] = [];
  for (const system of readdirSync(formatsDir(tree), { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const event of readdirSync(`${formatsDir(tree)}/${system.name}`)) {
      all.push({ system: system.name, event, text: readFileSync(`${formatsDir(tree)}/${system.name}/${event}/format`, 'utf8') });
    }
  }
  return async (events) => {
    const formats = all.filter((f) => events.includes(`${f.system}:${f.event}`));
    return { profile: { name: tree, release: tree, machine: 'x86_64', complete }, formats, missing: events.filter((e) => !formats.some((f) => `${f.system}:${f.event}` === e)), truncated: false };
  };
}

describe('checkProgram', () => {
  it('places a script error at its line and column, with the hint', async () => {
    const r = await checkProgram('BEGIN { }\nt:sched:sched_switch { @[args.next_com] = count(); }', 'script', kernel('linux-6.18'));
    expect(r.kind).toBe('errors');
    if (r.kind !== 'errors') return;
    expect(r.diagnostics[0]).toMatchObject({ severity: 'error', line: 2, column: 31, message: "args.next_com: sched/sched_switch has no field 'next_com'" });
    expect(r.diagnostics[0]?.hint).toContain('did you mean next_comm?');
    expect(r.diagnostics[0]?.from).toBe('BEGIN { }\n'.length + 30);
  });

  it('places a syntax error before any kernel is asked', async () => {
    let asked = false;
    const r = await checkProgram('t:sched:sched_switch { @ = count( }', 'script', async () => {
      asked = true;
      return { profile: null, formats: [], missing: [], truncated: false };
    });
    expect(r).toMatchObject({ kind: 'errors', diagnostics: [{ line: 1 }] });
    expect(asked).toBe(false);
  });

  it('gives the fields read and a compatible verdict on the kernel it compiled for', async () => {
    const r = await checkProgram('t:sched:sched_switch /args.prev_state == 0/ { @[args.next_comm] = count(); }', 'script', kernel('linux-6.18'));
    expect(r.kind).toBe('checked');
    if (r.kind !== 'checked') return;
    expect(r.fields.map((f) => `${f.event}.${f.field}`).sort()).toEqual(['sched/sched_switch.next_comm', 'sched/sched_switch.prev_state']);
    expect(r.verdict.status).toBe('compatible');
    expect(r.artifact.byteLength).toBeGreaterThan(0);
  });

  it('says an agent without a kernel has nothing to compile against', async () => {
    const r = await checkProgram('t:sched:sched_switch { @ = count(); }', 'script', async (events) => ({ profile: null, formats: [], missing: events, truncated: false }));
    expect(r.kind).toBe('no-kernel');
  });

  it('assembles Probeyard assembly, relocates its symbolic fields and gives the verdict; an assembler error lands on its line', async () => {
    const asm = readFileSync(`${root}examples/sched-switch-count.s`, 'utf8');
    const ok = await checkProgram(asm, 'asm', kernel('linux-6.18'));
    expect(ok.kind).toBe('checked');
    if (ok.kind === 'checked') {
      expect(ok.fields).toEqual([{ program: 'count_switch', event: 'sched/sched_switch', field: 'next_pid' }]);
      expect(['compatible', 'relocated']).toContain(ok.verdict.status);
    }
    const old = await checkProgram(asm, 'asm', kernel('android-3.10.49'));
    expect(old.kind).toBe('checked');
    const bad = await checkProgram(asm.replace('r6 = 1', 'r6 = 1 +'), 'asm', kernel('linux-6.18'));
    expect(bad.kind).toBe('errors');
    if (bad.kind === 'errors') expect(bad.diagnostics[0]?.line).toBe(asm.split('\n').findIndex((l) => l.includes('r6 = 1')) + 1);
  });

  it('says why a program is incompatible: a field the kernel does not have', async () => {
    const asm = readFileSync(`${root}examples/sched-switch-count.s`, 'utf8').replace('r1 + sched_switch.next_pid', 'r1 + sched_switch.next_pidx');
    const r = await checkProgram(asm, 'asm', kernel('linux-6.18'));
    expect(r.kind).toBe('checked');
    if (r.kind !== 'checked') return;
    expect(r.verdict.status).toBe('incompatible');
    expect(r.verdict.reasons[0]?.text).toContain('next_pidx');
  });
});

describe('checkProgram through providers', () => {
  const libraryProc = () => parseProvider(readFileSync(`${root}library/providers/proc.json`, 'utf8'));

  it("compiles a provider probe through the release it is handed, for the kernel's layout, and says which implementation", async () => {
    let asked: string[] = [];
    const r = await checkProgram('proc:::fork { @[str(args.parent_comm)] = count(); }', 'script', kernel('linux-6.18'), async (names) => {
      asked = names;
      return [libraryProc()];
    });
    expect(asked).toEqual(['proc']);
    expect(r.kind, JSON.stringify(r)).toBe('checked');
    if (r.kind !== 'checked') return;
    expect(r.verdict.status).toMatch(/^(compatible|relocated)$/);
    // 6.18 has parent_comm as a __data_loc string: the provider's implementation for it
    expect(r.fields.map((f) => `${f.event}.${f.field}`)).toContain('sched/sched_process_fork.parent_comm');
  });

  it('without the provider, says so at the probe', async () => {
    const r = await checkProgram('proc:::fork { @ = count(); }', 'script', kernel('linux-6.18'));
    expect(r.kind).toBe('errors');
    if (r.kind !== 'errors') return;
    expect(r.diagnostics[0]?.message).toContain("no provider 'proc' is known here");
  });
});
