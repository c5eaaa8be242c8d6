import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
import { formatTime, query } from '../../../../lib/format';
import { api, orNotFound } from '../../../../lib/session';

type Params = Promise<{ name: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Kernel ${decodeURIComponent((await params).name)}` };
}

const pageSize = 200;

export default async function KernelPage({ params, searchParams }: { params: Params; searchParams: Promise<{ q?: string; offset?: string }> }) {
  const name = decodeURIComponent((await params).name);
  const sp = await searchParams;
  const offset = Math.max(0, Number(sp.offset ?? 0) || 0);
  const client = await api();
  const [{ profile }, events, others] = await Promise.all([
    orNotFound(client.kernel.get.query({ name })),
    orNotFound(client.kernel.events.query({ profile: name, q: sp.q || undefined, offset, limit: pageSize })),
    client.kernel.list.query({ limit: 100 }),
  ]);
  const other = others.profiles.find((p) => p.name !== name)?.name;
  return (
    <>
      <p className="crumbs">
        <Link href="/kernels">Kernels</Link> /
      </p>
      <h1>{profile.name}</h1>
      <dl className="kv">
        <dt>Release</dt>
        <dd className="mono">{profile.release || '—'}</dd>
        <dt>Architecture</dt>
        <dd>{profile.machine || '—'}</dd>
        <dt>Content hash</dt>
        <dd className="mono small">{profile.contentHash}</dd>
        <dt>Events</dt>
        <dd>{profile.formats}</dd>
        <dt>Completeness</dt>
        <dd data-testid="completeness">
          {profile.complete
            ? 'complete: every event of this kernel is here, so a program whose event is missing cannot attach (incompatible)'
            : 'partial: some events of this kernel only (a trace.dat or an upload marked partial), so a missing event is unknown'}
        </dd>
        <dt>Agents on it</dt>
        <dd>{profile.agents}</dd>
        <dt>Added</dt>
        <dd>{formatTime(profile.createdAt)}</dd>
      </dl>
      <p>
        <Link href={`/compat${query({ release: profile.release || undefined })}`}>Compatibility on this release →</Link>
      </p>
      <h2>Events</h2>
      <form className="toolbar" action={`/kernels/${profile.name}`} aria-label="Filter events">
        <label htmlFor="ev-q">
          System or event contains
          <input id="ev-q" name="q" defaultValue={sp.q ?? ''} placeholder="sched" />
        </label>
        <button type="submit" className="button">
          Filter
        </button>
      </form>
      <DataTable
        rows={events.events}
        rowKey={(e) => `${e.system}/${e.event}`}
        caption={`Events of ${profile.name}`}
        empty="No event matches."
        columns={[
          { header: 'Event', className: 'mono', cell: (e) => `${e.system}/${e.event}` },
          { header: 'Format hash', className: 'mono small', cell: (e) => e.formatHash.slice(0, 12) },
          {
            header: 'Compare',
            className: 'small',
            cell: (e) => (other ? <Link href={`/kernels/diff${query({ a: profile.name, b: other, event: `${e.system}/${e.event}` })}`}>diff with {other}</Link> : '—'),
          },
        ]}
      />
      <nav className="pager" aria-label="Pages of events">
        {offset > 0 ? <Link href={`/kernels/${profile.name}${query({ q: sp.q, offset: Math.max(0, offset - pageSize) || undefined })}`}>← Previous</Link> : null}
        <span className="muted small">
          {events.total === 0 ? 0 : offset + 1}–{offset + events.events.length} of {events.total}
        </span>
        {offset + pageSize < events.total ? <Link href={`/kernels/${profile.name}${query({ q: sp.q, offset: offset + pageSize })}`}>Next →</Link> : null}
      </nav>
    </>
  );
}
