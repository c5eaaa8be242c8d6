import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../components/data-table';
import { Pager } from '../../../components/pager';
import { PublishForm } from '../../../components/publish-form';
import { formatTime, query, shortDigest } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Programs' };

type Search = Promise<{ q?: string; tag?: string; cursor?: string }>;

export default async function ProgramsPage({ searchParams }: { searchParams: Search }) {
  const sp = await searchParams;
  const session = await requireSession();
  const { programs, nextCursor } = await (await api()).program.list.query({ q: sp.q || undefined, tag: sp.tag || undefined, cursor: sp.cursor || undefined, limit: 50 });
  const filtered = Boolean(sp.q || sp.tag);
  return (
    <>
      <h1>Programs</h1>
      <form className="toolbar" action="/programs" aria-label="Filter programs">
        <label htmlFor="q">
          Search
          <input id="q" name="q" type="search" defaultValue={sp.q ?? ''} placeholder="name or description" />
        </label>
        <label htmlFor="tag">
          Tag
          <input id="tag" name="tag" defaultValue={sp.tag ?? ''} placeholder="sched" />
        </label>
        <button type="submit" className="button">
          Filter
        </button>
        {filtered ? <Link href="/programs">Clear filters</Link> : null}
      </form>
      <DataTable
        rows={programs}
        rowKey={(p) => p.id}
        caption="Programs, by name"
        empty={
          filtered
            ? 'No program matches these filters. Clear them to see every program.'
            : hasRole(session.role, 'publisher')
              ? 'No programs yet. Publish one below (an ELF object built with clang -target bpf, or Probeyard assembly), or with `probeyard publish FILE --name N --version V`.'
              : 'No programs yet. A publisher of this tenant publishes them (`probeyard publish`).'
        }
        columns={[
          {
            header: 'Program',
            cell: (p) => (
              <>
                <Link href={`/programs/${p.name}`}>
                  <strong>{p.name}</strong>
                </Link>
                {p.description ? <div className="muted small">{p.description}</div> : null}
              </>
            ),
          },
          {
            header: 'Latest version',
            cell: (p) =>
              p.latest ? (
                <>
                  <Link href={`/programs/${p.name}/${p.latest.version}`}>{p.latest.version}</Link>{' '}
                  {p.latest.yanked ? <span className="badge badge-yanked">yanked</span> : null}
                  <div className="muted small mono">{shortDigest(p.latest.digest)}</div>
                </>
              ) : (
                '—'
              ),
          },
          {
            header: 'Tags',
            cell: (p) =>
              p.tags.map((t) => (
                <Link key={t} className="tag" href={`/programs${query({ tag: t })}`}>
                  {t}
                </Link>
              )),
          },
          { header: 'Versions', numeric: true, cell: (p) => p.versions },
          { header: 'Updated', className: 'small', cell: (p) => formatTime(p.updatedAt) },
        ]}
      />
      <Pager
        noun="programs"
        count={programs.length}
        isFirst={!sp.cursor}
        firstHref={`/programs${query({ q: sp.q, tag: sp.tag })}`}
        nextHref={nextCursor ? `/programs${query({ q: sp.q, tag: sp.tag, cursor: nextCursor })}` : null}
      />
      {hasRole(session.role, 'publisher') ? (
        <section className="card" aria-labelledby="publish-heading" style={{ marginTop: '1.5rem' }}>
          <h2 id="publish-heading">Publish a program</h2>
          <PublishForm />
        </section>
      ) : null}
    </>
  );
}
