import type { Metadata } from 'next';
import Link from 'next/link';
import { KernelUpload } from '../../../components/kernel-upload';
import { DataTable } from '../../../components/data-table';
import { Pager } from '../../../components/pager';
import { formatTime, query, shortDigest } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Kernels' };

const sourceText: Record<string, string> = { agent: 'reported by an agent', events_tree: 'uploaded events/ tree', trace_dat: 'from a trace.dat' };

export default async function KernelsPage({ searchParams }: { searchParams: Promise<{ cursor?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  const { profiles, nextCursor } = await (await api()).kernel.list.query({ limit: 100, cursor: sp.cursor || undefined });
  return (
    <>
      <h1>Kernel profiles</h1>
      <p className="muted">A kernel is the set of its event format files, keyed by content hash: distro kernels differ from upstream at the same version string.</p>
      <p className="muted">
        A <strong>complete</strong> profile holds every event of its kernel (an agent’s tracefs, a full <code>events/</code> tree): a program whose event it lacks is incompatible there.
        A <strong>partial</strong> one holds some events only (a trace.dat, an upload marked partial): a missing event is unknown, not known to be absent.
      </p>
      {profiles.length === 0 ? (
        <p className="empty">
          No kernel profiles yet. Agents report theirs when they enroll; a publisher can upload an <code>events/</code> tree (as a .tar.gz) or a trace.dat below, or with{' '}
          <code>probeyard kernels upload PATH --name N</code>.
        </p>
      ) : (
        <>
          <DataTable
            rows={profiles}
            rowKey={(p) => p.id}
            caption="Kernel profiles by name"
            columns={[
              {
                header: 'Profile',
                cell: (p) => (
                  <Link href={`/kernels/${p.name}`}>
                    <strong>{p.name}</strong>
                  </Link>
                ),
              },
              { header: 'Release', className: 'mono small', cell: (p) => p.release || '—' },
              { header: 'Arch', className: 'small', cell: (p) => p.machine || '—' },
              { header: 'Source', className: 'small', cell: (p) => sourceText[p.source] ?? p.source },
              { header: 'Completeness', className: 'small', testId: 'completeness', cell: (p) => (p.complete ? 'complete' : 'partial') },
              { header: 'Events', numeric: true, cell: (p) => p.formats },
              { header: 'Agents', numeric: true, cell: (p) => p.agents },
              { header: 'Content hash', className: 'mono small', cell: (p) => shortDigest(p.contentHash) },
              { header: 'Added', className: 'small', cell: (p) => formatTime(p.createdAt) },
            ]}
          />
          <Pager noun="profiles" count={profiles.length} isFirst={!sp.cursor} firstHref="/kernels" nextHref={nextCursor ? `/kernels${query({ cursor: nextCursor })}` : null} />
          {profiles.length >= 2 ? (
            <p>
              <Link href={`/kernels/diff${query({ a: profiles[0]?.name, b: profiles[1]?.name })}`}>Compare two kernels’ formats →</Link>
            </p>
          ) : null}
        </>
      )}
      {hasRole(session.role, 'publisher') ? (
        <section className="card" aria-labelledby="upload-heading" style={{ marginTop: '1.5rem' }}>
          <h2 id="upload-heading">Upload a kernel profile</h2>
          <KernelUpload />
        </section>
      ) : null}
    </>
  );
}
