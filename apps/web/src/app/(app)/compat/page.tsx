import type { Metadata } from 'next';
import Link from 'next/link';
import { CompatMatrix } from '../../../components/compat-matrix';
import { CompatSettings } from '../../../components/compat-settings';
import { query } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, orNotFound, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Compatibility' };

type Search = Promise<{ program?: string; release?: string; machine?: string; offset?: string; cell?: string }>;

const pageSize = 500;

export default async function CompatPage({ searchParams }: { searchParams: Search }) {
  const sp = await searchParams;
  const offset = Math.max(0, Number(sp.offset ?? 0) || 0);
  const input = { program: sp.program || undefined, release: sp.release || undefined, machine: sp.machine || undefined, offset, limit: pageSize };
  const session = await requireSession();
  const client = await api();
  const [grid, { settings }] = await Promise.all([orNotFound(client.compat.grid.query(input)), client.compat.settings.query()]);
  const [versionId, profileId] = (sp.cell ?? '').split(':');
  const initialCell = versionId && profileId ? { versionId, profileId } : null;
  return (
    <>
      <h1>Compatibility</h1>
      <p className="muted">
        Every version × every kernel profile, computed from the kernel&apos;s own format files: <em>compatible</em> (same layout), <em>relocated</em> (runs after
        relocation by field name), <em>incompatible</em> (with the reason and the field diff; also where a complete profile lacks the event), <em>unknown</em> (a
        partial profile — a trace.dat, an upload marked partial — lacks the event).
      </p>
      <CompatSettings strictCharSign={settings.strictCharSign} canChange={hasRole(session.role, 'admin')} />
      <form className="toolbar" action="/compat" aria-label="Filter the matrix">
        <label htmlFor="f-program">
          Program
          <input id="f-program" name="program" defaultValue={sp.program ?? ''} placeholder="all programs" />
        </label>
        <label htmlFor="f-release">
          Kernel release contains
          <input id="f-release" name="release" defaultValue={sp.release ?? ''} placeholder="6.1" />
        </label>
        <label htmlFor="f-machine">
          Architecture
          <select id="f-machine" name="machine" defaultValue={sp.machine ?? ''}>
            <option value="">all</option>
            {grid.machines.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button">
          Filter
        </button>
        {sp.program || sp.release || sp.machine ? <Link href="/compat">Clear filters</Link> : null}
      </form>
      <CompatMatrix key={JSON.stringify(input)} initial={grid} input={input} initialCell={initialCell} />
      {grid.totalVersions > pageSize ? (
        <nav className="pager" aria-label="Pages of versions">
          {offset > 0 ? <Link href={`/compat${query({ ...sp, cell: undefined, offset: Math.max(0, offset - pageSize) || undefined })}`}>← Previous versions</Link> : null}
          <span className="muted small">
            versions {offset + 1}–{offset + grid.versions.length} of {grid.totalVersions}
          </span>
          {offset + pageSize < grid.totalVersions ? <Link href={`/compat${query({ ...sp, cell: undefined, offset: offset + pageSize })}`}>Next versions →</Link> : null}
        </nav>
      ) : null}
    </>
  );
}
