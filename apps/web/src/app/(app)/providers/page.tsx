import type { Metadata } from 'next';
import Link from 'next/link';
import { formatTime } from '../../../lib/format';
import { api } from '../../../lib/session';

export const metadata: Metadata = { title: 'Providers' };

export default async function ProvidersPage() {
  const { providers } = await (await api()).provider.list.query();
  return (
    <>
      <h1>Providers</h1>
      <p className="muted">
        Stable probes (<span className="mono">proc:::exec</span>) that scripts use instead of raw tracepoints. Each probe has implementations, one per way kernels lay out the
        event; a program pins a provider&apos;s major version, and a new release of it recomputes the program&apos;s compatibility without republishing.
      </p>
      {providers.length === 0 ? (
        <p className="empty">No providers yet: publish one with probeyard providers publish FILE.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Providers of this tenant and of the instance</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Scope</th>
              <th scope="col">Newest version</th>
              <th scope="col">Published</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {providers.map((p) => {
              const newest = p.versions.find((v) => v.yankedAt === null) ?? p.versions[0];
              return (
                <tr key={`${p.scope}/${p.name}`}>
                  <td>
                    <Link href={`/providers/${encodeURIComponent(p.name)}`} className="mono">
                      {p.name}
                    </Link>
                  </td>
                  <td className="small">{p.scope === 'instance' ? 'instance-wide' : 'this tenant'}</td>
                  <td className="mono small">
                    {newest?.version ?? '—'}
                    {p.versions.length > 1 ? <span className="muted"> ({p.versions.length} versions)</span> : null}
                  </td>
                  <td className="small">{formatTime(newest?.publishedAt)}</td>
                  <td className="small">{p.description}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
