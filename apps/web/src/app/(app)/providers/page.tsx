import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../components/data-table';
import { formatTime } from '../../../lib/format';
import { api } from '../../../lib/session';

export const metadata: Metadata = { title: 'Providers' };

/** The newest version not yanked, else the newest (versions come newest first). */
function newestOf<V extends { yankedAt: unknown }>(p: { versions: V[] }): V | undefined {
  return p.versions.find((v) => v.yankedAt === null) ?? p.versions[0];
}

export default async function ProvidersPage() {
  const { providers } = await (await api()).provider.list.query();
  return (
    <>
      <h1>Providers</h1>
      <p className="muted">
        Stable probes (<span className="mono">proc:::exec</span>) that scripts use instead of raw tracepoints. Each probe has implementations, one per way kernels lay out the
        event; a program pins a provider&apos;s major version, and a new release of it recomputes the program&apos;s compatibility without republishing.
      </p>
      <DataTable
        rows={providers}
        rowKey={(p) => `${p.scope}/${p.name}`}
        caption="Providers of this tenant and of the instance"
        empty="No providers yet: publish one with probeyard providers publish FILE."
        columns={[
          {
            header: 'Provider',
            cell: (p) => (
              <Link href={`/providers/${encodeURIComponent(p.name)}`} className="mono">
                {p.name}
              </Link>
            ),
          },
          { header: 'Scope', className: 'small', cell: (p) => (p.scope === 'instance' ? 'instance-wide' : 'this tenant') },
          {
            header: 'Newest version',
            className: 'mono small',
            cell: (p) => (
              <>
                {newestOf(p)?.version ?? '—'}
                {p.versions.length > 1 ? <span className="muted"> ({p.versions.length} versions)</span> : null}
              </>
            ),
          },
          { header: 'Published', className: 'small', cell: (p) => formatTime(newestOf(p)?.publishedAt) },
          { header: 'Description', className: 'small', cell: (p) => p.description },
        ]}
      />
    </>
  );
}
