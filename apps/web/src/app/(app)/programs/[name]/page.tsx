import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
import { PublishForm } from '../../../../components/publish-form';
import { YankButton } from '../../../../components/yank-button';
import { formatBytes, formatTime, query, shortDigest } from '../../../../lib/format';
import { hasRole } from '../../../../lib/roles';
import { api, orNotFound, requireSession } from '../../../../lib/session';

type Params = Promise<{ name: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: decodeURIComponent((await params).name) };
}

const pageSize = 50;

export default async function ProgramPage({ params, searchParams }: { params: Params; searchParams: Promise<{ offset?: string }> }) {
  const name = decodeURIComponent((await params).name);
  const offset = Math.max(0, Number((await searchParams).offset ?? 0) || 0);
  const session = await requireSession();
  const client = await api();
  const [{ program }, page] = await Promise.all([orNotFound(client.program.get.query({ name })), orNotFound(client.version.list.query({ name, offset, limit: pageSize }))]);
  const publisher = hasRole(session.role, 'publisher');
  return (
    <>
      <p className="crumbs">
        <Link href="/programs">Programs</Link> /
      </p>
      <h1>
        {program.name} <span className="badge badge-abi" title="Compatibility is computed per kernel, never assumed">module-like, no ABI</span>
      </h1>
      {program.description ? <p>{program.description}</p> : null}
      <p>
        {program.tags.map((t) => (
          <Link key={t} className="tag" href={`/programs${query({ tag: t })}`}>
            {t}
          </Link>
        ))}{' '}
        <Link href={`/compat${query({ program: program.name })}`}>Compatibility of every version →</Link>
      </p>
      <h2>Versions</h2>
      <DataTable
        rows={page.versions}
        rowKey={(v) => v.id}
        caption={`Versions of ${program.name}, newest first`}
        columns={[
          {
            header: 'Version',
            cell: (v) => (
              <Link href={`/programs/${program.name}/${v.version}`}>
                <strong>{v.version}</strong>
              </Link>
            ),
          },
          { header: 'Digest', className: 'mono small', cell: (v) => shortDigest(v.digest) },
          { header: 'Artifact', className: 'small', cell: (v) => `${v.artifactKind === 'elf' ? 'ELF object' : 'assembly'}, ${formatBytes(v.size)}` },
          { header: 'Published', className: 'small', cell: (v) => formatTime(v.publishedAt) },
          {
            header: 'Status',
            cell: (v) =>
              v.yanked ? (
                <>
                  <span className="badge badge-yanked">yanked</span> <span className="small">{v.yanked.reason}</span>
                </>
              ) : (
                <span className="small muted">available</span>
              ),
          },
          publisher && { header: 'Actions', cell: (v) => (v.yanked ? null : <YankButton name={program.name} version={v.version} />) },
        ]}
      />
      {page.total > pageSize ? (
        <nav className="pager" aria-label="Pages of versions">
          {offset > 0 ? <Link href={`/programs/${program.name}${query({ offset: Math.max(0, offset - pageSize) || undefined })}`}>← Newer</Link> : null}
          <span className="muted small">
            {offset + 1}–{offset + page.versions.length} of {page.total}
          </span>
          {offset + pageSize < page.total ? <Link href={`/programs/${program.name}${query({ offset: offset + pageSize })}`}>Older →</Link> : null}
        </nav>
      ) : null}
      {publisher ? (
        <section className="card" aria-labelledby="publish-heading" style={{ marginTop: '1.5rem' }}>
          <h2 id="publish-heading">Publish a new version</h2>
          <PublishForm name={program.name} />
        </section>
      ) : null}
    </>
  );
}
