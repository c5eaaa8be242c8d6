// kernel.formatsFor: the format files the live editor compiles against in the browser, by agent or
// profile name, wildcards as bpftrace expands them, bounded, tenant-scoped.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPatternMatcher, matchEvents } from '../src/data/kernel-formats-for.js';
import { backends, type Caller, type Harness, openHarness, skipReason } from './harness.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tarball = (tree: string) => execFileSync('tar', ['-C', `${root}packages/compat/test/fixtures/formats/${tree}`, '-czf', '-', '.']).toString('base64');

describe('eventPatternMatcher', () => {
  it.each([
    ['sched:sched_switch', 'sched', 'sched_switch', true],
    ['sched/sched_switch', 'sched', 'sched_switch', true],
    ['sched:sched_switch', 'sched', 'sched_switchx', false],
    ['sched:sched_*', 'sched', 'sched_wakeup', true],
    ['sched:*', 'irq', 'irq_handler_entry', false],
    ['*:sched_?witch', 'sched', 'sched_switch', true],
    ['sched:sched.switch', 'sched', 'schedXswitch', false],
  ])('%s matches %s/%s: %s', (pattern, system, event, expected) => {
    expect(eventPatternMatcher(pattern)(system, event)).toBe(expected);
  });
});

describe('matchEvents', () => {
  const names = Array.from({ length: 70 }, (_, i) => ({ system: i < 65 ? 'sched' : 'irq', event: `e${String(i).padStart(2, '0')}` }));
  it('cuts a wildcard at the limit, says so, and names the patterns that match nothing', () => {
    const r = matchEvents(names, ['sched:*', 'irq:e69', 'net:*']);
    expect(r.chosen).toHaveLength(64);
    expect(r.chosen[0]).toEqual({ system: 'sched', event: 'e00' });
    expect(r).toMatchObject({ truncated: true, missing: ['net:*'] });
    expect(matchEvents(names, ['irq:*'])).toMatchObject({ truncated: false, missing: [], chosen: names.slice(65) });
  });
});

describe.each(backends)('kernel.formatsFor on %s', (backend) => {
  const skip = skipReason(backend);
  let h: Harness;
  beforeAll(async () => {
    if (!skip) h = await openHarness(backend);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function agentWithProfile(owner: Caller, report: boolean) {
    const { enrollmentToken } = await owner.agent.createEnrollmentToken({ labels: { env: 'dev' } });
    const r = await (await h.caller()).agent.enroll({ enrollmentToken, hostname: `node-${report ? 'k' : 'n'}` });
    if (report) await (await h.caller(r.credential)).agent.reportProfile({ release: '6.18.44', machine: 'x86_64', tarball: tarball('linux-6.18') });
    return r.agent.id;
  }

  it.skipIf(skip)('gives the formats of the events a program names, by agent or profile, wildcards expanded and bounded', async () => {
    const t = await h.tenant('ff');
    const agentId = await agentWithProfile(t.owner, true);
    const r = await t.owner.kernel.formatsFor({ agentId, events: ['sched:sched_switch', 'nope:none'] });
    expect(r.profile).toMatchObject({ release: '6.18.44', machine: 'x86_64', complete: true });
    expect(r.formats.map((f) => `${f.system}/${f.event}`)).toEqual(['sched/sched_switch']);
    expect(r.formats[0]?.text).toMatch(/^name: sched_switch\n/);
    expect(r.formats[0]?.text).toContain('field:pid_t next_pid;');
    expect(r).toMatchObject({ missing: ['nope:none'], truncated: false });
    const wild = await t.owner.kernel.formatsFor({ profile: r.profile!.name, events: ['sched:sched_process_*'] });
    expect(wild.formats.length).toBeGreaterThan(1);
    expect(wild.formats.every((f) => f.system === 'sched' && f.event.startsWith('sched_process_'))).toBe(true);
    const all = await t.owner.kernel.formatsFor({ agentId, events: ['*:*'] });
    // the fixture profile has 6 events; the 64-event bound is matchEvents' (tested above)
    expect(all).toMatchObject({ truncated: false, missing: [] });
    expect(all.formats).toHaveLength(6);
    // a viewer reads them too (the editor verifies for anyone who may see the agent)
    const viewer = await h.member(t.owner, 'viewer');
    expect((await viewer.caller.kernel.formatsFor({ agentId, events: ['sched:sched_switch'] })).formats).toHaveLength(1);
    // an agent that has not reported its kernel: no profile, said so
    const bare = await agentWithProfile(t.owner, false);
    expect(await t.owner.kernel.formatsFor({ agentId: bare, events: ['sched:sched_switch'] })).toEqual({ profile: null, formats: [], missing: ['sched:sched_switch'], truncated: false });
  });

  it.skipIf(skip)('refuses bad input with BAD_REQUEST and keeps each tenant to its own: NOT_FOUND', async () => {
    const a = await h.tenant('ff-a');
    const b = await h.tenant('ff-b');
    const agentId = await agentWithProfile(a.owner, true);
    const name = (await a.owner.kernel.formatsFor({ agentId, events: ['sched:sched_switch'] })).profile!.name;
    await expect(b.owner.kernel.formatsFor({ agentId, events: ['sched:sched_switch'] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(b.owner.kernel.formatsFor({ profile: name, events: ['sched:sched_switch'] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(a.owner.kernel.formatsFor({ agentId: '00000000-0000-4000-8000-000000000000', events: ['sched:sched_switch'] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(a.owner.kernel.formatsFor({ agentId, events: [] })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(a.owner.kernel.formatsFor({ agentId, events: ['../etc/passwd'] })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(a.owner.kernel.formatsFor({ agentId, events: Array.from({ length: 33 }, () => 'a:b') })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect((await h.caller()).kernel.formatsFor({ agentId, events: ['sched:sched_switch'] })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
