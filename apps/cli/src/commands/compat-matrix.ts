// `probeyard compat NAME[@VERSION]`: the registry's compatibility matrix as a terminal table.
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, registryClient, resolveTarget, table } from '../registry.js';
import { parseVersionRef } from './yank.js';

export async function runCompatMatrix(ref: string, values: { registry?: string | undefined; token?: string | undefined; json?: boolean | undefined }, io: CliIo): Promise<number> {
  const { name, version } = parseVersionRef(ref);
  if (!name || version === '') throw new CliError(`expected NAME or NAME@VERSION (or a program file), not ${ref}`);
  const { url, token } = resolveTarget(values);
  if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
  const m = await callRegistry(url, () => registryClient(url, token).compat.matrix.query({ name, ...(version !== undefined ? { version } : {}) }));
  if (values.json) {
    io.stdout(`${JSON.stringify(m, null, 2)}\n`);
  } else {
    const cell = (versionId: string, profileId: string) => m.cells.find((c) => c.versionId === versionId && c.profileId === profileId);
    // a partial profile (a trace.dat, an upload marked partial) is marked: its `unknown` means "not in the data"
    const rows = [['VERSION', ...m.profiles.map((p) => (p.complete ? p.name : `${p.name} (partial)`))]];
    for (const v of m.versions) rows.push([`${v.program}@${v.version}${v.yankedAt ? ' (yanked)' : ''}`, ...m.profiles.map((p) => cell(v.id, p.id)?.verdict ?? 'pending')]);
    const lines = [`${name}: module-like, no ABI — compatibility computed per kernel profile`, table(rows)];
    for (const v of m.versions) {
      for (const p of m.profiles) {
        const c = cell(v.id, p.id);
        if (!c || c.verdict === 'compatible') continue;
        const why = [...c.reasons.map((r) => `  ${r.kind}: ${r.text}`), ...c.fieldDiffs.map((f) => `  field ${f.text}`)];
        if (c.verdict === 'relocated') why.push(...c.programs.flatMap((x) => ((x as { changes?: string[] }).changes ?? []).map((ch) => `  relocated ${ch}`)));
        if (why.length > 0) lines.push(`${v.program}@${v.version} on ${p.name}: ${c.verdict}`, ...why);
      }
    }
    if (m.profiles.length === 0) lines.push('no kernel profiles yet: `probeyard kernels upload`, or enrol an agent');
    if (m.profiles.some((p) => !p.complete)) lines.push('(partial): the profile holds some of its kernel\'s events only (a trace.dat, an upload marked partial): a missing event is unknown there, incompatible on the others');
    if (m.pendingJobs > 0) lines.push(`${m.pendingJobs} compat job(s) still running: pending cells fill in when they finish`);
    io.stdout(`${lines.join('\n')}\n`);
  }
  const runs = m.cells.every((c) => c.verdict === 'compatible' || c.verdict === 'relocated');
  return runs ? ExitCode.ok : ExitCode.refused;
}
