import type { Metadata } from 'next';
import Link from 'next/link';
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
          <table className="list">
            <caption className="visually-hidden">Implementations of {probe.name}, tried in order</caption>
            <thead>
              <tr>
                <th scope="col">Implementation for</th>
                <th scope="col">Tracepoint</th>
                <th scope="col">When</th>
                <th scope="col">Arguments</th>
              </tr>
            </thead>
            <tbody>
              {probe.implementations.map((i) => (
                <tr key={i.for}>
                  <td>{i.for}</td>
                  <td className="mono small">{i.tracepoint}</td>
                  <td className="small">{i.when.length === 0 ? 'the event exists' : i.when.map(conditionText).join(', ')}</td>
                  <td className="mono small">
                    {Object.entries(i.args).map(([arg, expr]) => (
                      <div key={arg}>
                        {arg} = {expr}
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}

      <h2>Kernels covered</h2>
      <p className="muted">Which implementation serves each probe on each kernel profile of this tenant, or why none does.</p>
      {coverage.kernels.length === 0 ? (
        <p className="empty">No kernel profiles yet.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Implementation per kernel profile and probe</caption>
          <thead>
            <tr>
              <th scope="col">Kernel</th>
              {probes.map((p) => (
                <th scope="col" key={p.name} className="mono">
                  {p.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {coverage.kernels.map((k) => (
              <tr key={k.profile}>
                <th scope="row">
                  <Link href={`/kernels/${encodeURIComponent(k.profile)}`}>{k.profile}</Link>
                  <span className="muted small"> {k.release}{k.complete ? '' : ' (partial)'}</span>
                </th>
                {k.probes.map((c) => (
                  <td key={c.probe} className="small" title={c.reason}>
                    {c.implementation ?? <span className={c.status === 'unknown' ? 'muted' : 'v-incompatible'}>{c.status === 'unknown' ? 'unknown' : 'none'}</span>}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Pinned by</h2>
      <p className="muted">This tenant&apos;s program versions that resolve through this provider: each follows the newest release of the major it pinned at publish.</p>
      {pinned.versions.length === 0 ? (
        <p className="empty" data-testid="pinned-by-empty">
          No program of this tenant pins {got.provider.name}.
        </p>
      ) : (
        <table className="list" data-testid="pinned-by">
          <caption className="visually-hidden">Program versions pinning {got.provider.name}</caption>
          <thead>
            <tr>
              <th scope="col">Program</th>
              <th scope="col">Version</th>
              <th scope="col">Pins</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {pinned.versions.map((v) => (
              <tr key={`${v.program}@${v.version}`}>
                <td>
                  <Link href={`/programs/${encodeURIComponent(v.program)}`}>{v.program}</Link>
                </td>
                <td className="mono small">
                  <Link href={`/programs/${encodeURIComponent(v.program)}/${encodeURIComponent(v.version)}`}>{v.version}</Link>
                  {v.yanked ? <span className="muted small"> (yanked)</span> : null}
                </td>
                <td className="mono small">
                  {got.provider.name}@{v.major}
                </td>
                <td className="small">{formatTime(v.publishedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pinned.more ? <p className="muted small">Only the first {pinned.versions.length} are listed.</p> : null}

      <h2>Text</h2>
      <pre className="listing mono small">{got.text}</pre>
    </>
  );
}
