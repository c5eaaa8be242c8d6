import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
import { formatTime, query } from '../../../../lib/format';
import { api, orNotFound } from '../../../../lib/session';

type Params = Promise<{ name: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Provider ${decodeURIComponent((await params).name)}` };
}

/** A condition of an implementation as a reader says it. */
function conditionText(c: { field?: string | undefined; event?: string | undefined; kind?: string | undefined; absent?: boolean | undefined }): string {
  if (c.event !== undefined) return `${c.absent ? 'no ' : ''}event ${c.event}`;
  return `${c.absent ? 'no field ' : ''}${c.field ?? ''}${c.kind ? ` is ${c.kind}` : ''}`;
}

export default async function ProviderPage({ params, searchParams }: { params: Params; searchParams: Promise<{ version?: string }> }) {
  const name = decodeURIComponent((await params).name);
  const sp = await searchParams;
  const client = await api();
  const version = sp.version || undefined;
  const [got, coverage, pinned] = await Promise.all([
    orNotFound(client.provider.get.query({ name, version })),
    orNotFound(client.provider.coverage.query({ name, version })),
    orNotFound(client.provider.pinnedBy.query({ name })),
  ]);
  const probes = got.probes;
  type Kernel = (typeof coverage.kernels)[number];
  /** A kernel's cell for one probe (the registry answers one per probe of the version). */
  const probeOf = (k: Kernel, probe: string) => k.probes.find((c) => c.probe === probe);
  return (
    <>
      <p className="crumbs">
        <Link href="/providers">Providers</Link> /
      </p>
      <h1>
        {got.provider.name}@{got.version.version}
      </h1>
      <dl className="kv">
        <dt>Scope</dt>
        <dd>{got.provider.scope === 'instance' ? 'instance-wide (every tenant)' : 'this tenant'}</dd>
        <dt>Published</dt>
        <dd>{formatTime(got.version.publishedAt)}</dd>
        {got.version.yankedAt ? (
          <>
            <dt>Yanked</dt>
            <dd>
              {formatTime(got.version.yankedAt)}: {got.version.yankReason}
            </dd>
          </>
        ) : null}
        <dt>Versions</dt>
        <dd>
          {got.provider.versions.map((v, i) => (
            <span key={v.version}>
              {i > 0 ? ', ' : ''}
              <Link href={`/providers/${encodeURIComponent(name)}${query({ version: v.version })}`} className="mono small" aria-current={v.version === got.version.version ? 'page' : undefined}>
                {v.version}
              </Link>
              {v.yankedAt ? <span className="muted small"> (yanked)</span> : null}
            </span>
          ))}
        </dd>
        <dt>Description</dt>
        <dd>{got.provider.description || '—'}</dd>
      </dl>

      <h2>Probes and implementations</h2>
      {probes.map((probe) => (
        <section key={probe.name}>
          <h3 className="mono">
            {got.provider.name}:::{probe.name}({probe.args.map((a) => `${a.type} ${a.name}`).join(', ')})
          </h3>
          <DataTable
            rows={probe.implementations}
            rowKey={(i) => i.for}
            caption={`Implementations of ${probe.name}, tried in order`}
            columns={[
              { header: 'Implementation for', cell: (i) => i.for },
              { header: 'Tracepoint', className: 'mono small', cell: (i) => i.tracepoint },
              { header: 'When', className: 'small', cell: (i) => (i.when.length === 0 ? 'the event exists' : i.when.map(conditionText).join(', ')) },
              {
                header: 'Arguments',
                className: 'mono small',
                cell: (i) =>
                  Object.entries(i.args).map(([arg, expr]) => (
                    <div key={arg}>
                      {arg} = {expr}
                    </div>
                  )),
              },
            ]}
          />
        </section>
      ))}

      <h2>Kernels covered</h2>
      <p className="muted">Which implementation serves each probe on each kernel profile of this tenant, or why none does.</p>
      <DataTable
        rows={coverage.kernels}
        rowKey={(k) => k.profile}
        caption="Implementation per kernel profile and probe"
        empty="No kernel profiles yet."
        columns={[
          {
            header: 'Kernel',
            rowHeader: true,
            cell: (k) => (
              <>
                <Link href={`/kernels/${encodeURIComponent(k.profile)}`}>{k.profile}</Link>
                <span className="muted small">
                  {' '}
                  {k.release}
                  {k.complete ? '' : ' (partial)'}
                </span>
              </>
            ),
          },
          ...probes.map((p) => ({
            key: p.name,
            header: p.name,
            headerClassName: 'mono',
            className: 'small',
            title: (k: Kernel) => probeOf(k, p.name)?.reason,
            cell: (k: Kernel) => {
              const c = probeOf(k, p.name);
              if (!c) return null;
              return c.implementation ?? <span className={c.status === 'unknown' ? 'muted' : 'v-incompatible'}>{c.status === 'unknown' ? 'unknown' : 'none'}</span>;
            },
          })),
        ]}
      />

      <h2>Pinned by</h2>
      <p className="muted">This tenant&apos;s program versions that resolve through this provider: each follows the newest release of the major it pinned at publish.</p>
      <DataTable
        rows={pinned.versions}
        rowKey={(v) => `${v.program}@${v.version}`}
        testId="pinned-by"
        caption={`Program versions pinning ${got.provider.name}`}
        empty={`No program of this tenant pins ${got.provider.name}.`}
        emptyTestId="pinned-by-empty"
        columns={[
          { header: 'Program', cell: (v) => <Link href={`/programs/${encodeURIComponent(v.program)}`}>{v.program}</Link> },
          {
            header: 'Version',
            className: 'mono small',
            cell: (v) => (
              <>
                <Link href={`/programs/${encodeURIComponent(v.program)}/${encodeURIComponent(v.version)}`}>{v.version}</Link>
                {v.yanked ? <span className="muted small"> (yanked)</span> : null}
              </>
            ),
          },
          { header: 'Pins', className: 'mono small', cell: (v) => `${got.provider.name}@${v.major}` },
          { header: 'Published', className: 'small', cell: (v) => formatTime(v.publishedAt) },
        ]}
      />
      {pinned.more ? <p className="muted small">Only the first {pinned.versions.length} are listed.</p> : null}

      <h2>Text</h2>
      <pre className="listing mono small">{got.text}</pre>
    </>
  );
}
