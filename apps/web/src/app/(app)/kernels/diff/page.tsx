import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
import { changeText } from '../../../../lib/change-text';
import { query } from '../../../../lib/format';
import { api, orNotFound } from '../../../../lib/session';

export const metadata: Metadata = { title: 'Format diff' };

interface Field {
  name: string;
  type: string;
  byteOffset: number;
  size: number;
  signed: boolean;
  arrayLength?: number | undefined;
  dynamic?: string | undefined;
  isCommon: boolean;
}


function typeOf(f: Field): string {
  return `${f.dynamic ? `__${f.dynamic} ` : ''}${f.type}${f.arrayLength ? `[${f.arrayLength}]` : ''}`;
}

export default async function DiffPage({ searchParams }: { searchParams: Promise<{ a?: string; b?: string; event?: string }> }) {
  const sp = await searchParams;
  const client = await api();
  const { profiles } = await client.kernel.list.query({ limit: 500 });
  const a = sp.a ?? profiles[0]?.name;
  const b = sp.b ?? profiles[1]?.name;
  const form = (
    <form className="toolbar" action="/kernels/diff" aria-label="Choose two kernels">
      <label htmlFor="d-a">
        Kernel A
        <select id="d-a" name="a" defaultValue={a}>
          {profiles.map((p) => (
            <option key={p.id} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label htmlFor="d-b">
        Kernel B
        <select id="d-b" name="b" defaultValue={b}>
          {profiles.map((p) => (
            <option key={p.id} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label htmlFor="d-event">
        Event (system/event)
        <input id="d-event" name="event" defaultValue={sp.event ?? ''} placeholder="sched/sched_switch" />
      </label>
      <button type="submit" className="button">
        Compare
      </button>
    </form>
  );
  if (!a || !b) {
    return (
      <>
        <h1>Format diff</h1>
        <p className="empty">A diff needs two kernel profiles; this tenant has {profiles.length}. Upload one on the Kernels page.</p>
      </>
    );
  }
  const diff = await orNotFound(client.kernel.diff.query({ a, b, ...(sp.event ? { event: sp.event } : {}) }));
  const event = sp.event;
  const [fa, fb] = event
    ? await Promise.all([orNotFound(client.kernel.format.query({ profile: a, event })), orNotFound(client.kernel.format.query({ profile: b, event }))])
    : [null, null];
  const changesByField = new Map<string, string[]>();
  for (const c of diff.changed.find((x) => x.event === event || x.event.endsWith(`/${event}`))?.changes ?? []) {
    changesByField.set(c.field, [...(changesByField.get(c.field) ?? []), changeText[c.kind] ?? c.kind]);
  }
  const names: string[] = [];
  for (const f of [...((fa?.event?.fields ?? []) as Field[]), ...((fb?.event?.fields ?? []) as Field[])]) if (!names.includes(f.name)) names.push(f.name);
  const byName = (fs: Field[] | undefined) => new Map((fs ?? []).map((f) => [f.name, f]));
  const ma = byName(fa?.event?.fields as Field[] | undefined);
  const mb = byName(fb?.event?.fields as Field[] | undefined);
  return (
    <>
      <p className="crumbs">
        <Link href="/kernels">Kernels</Link> /
      </p>
      <h1>
        Format diff: {a} → {b}
      </h1>
      {form}
      {event ? (
        <section aria-labelledby="sbs-heading">
          <h2 id="sbs-heading" className="mono">
            {event}
          </h2>
          {!fa?.event || !fb?.event ? (
            <p className="empty">
              {!fa?.event ? a : b} has no event {event}: a program attached to it is <em>unknown</em> there.
            </p>
          ) : (
            <DataTable
              className="side-by-side"
              rows={names.map((n) => ({ name: n, x: ma.get(n), y: mb.get(n), changes: changesByField.get(n) }))}
              rowKey={(r) => r.name}
              caption={`Fields of ${event} on ${a} and on ${b}`}
              columns={[
                { header: 'Field', rowHeader: true, className: 'mono', cell: (r) => r.name },
                { header: `${a}: type`, className: 'mono small', cell: (r) => (r.x ? `${typeOf(r.x)}${r.x.signed ? ' (signed)' : ''}` : '—') },
                { header: 'offset, size', className: (r) => `small${r.changes ? ' changed' : ''}`, cell: (r) => (r.x ? `+${r.x.byteOffset}, ${r.x.size} B` : 'absent') },
                { header: `${b}: type`, className: 'mono small', cell: (r) => (r.y ? `${typeOf(r.y)}${r.y.signed ? ' (signed)' : ''}` : '—') },
                { header: 'offset, size', className: (r) => `small${r.changes ? ' changed' : ''}`, cell: (r) => (r.y ? `+${r.y.byteOffset}, ${r.y.size} B` : 'absent') },
                { header: 'Change', cell: (r) => (r.changes ? <strong>{r.changes.join(', ')}</strong> : <span className="muted small">same</span>) },
              ]}
            />
          )}
        </section>
      ) : null}
      <h2>Every event</h2>
      <p>
        {diff.same} events have the same format in both; {diff.changed.length} differ; {diff.removed.length} only in {a}; {diff.added.length} only in {b}.
      </p>
      {diff.changed.length ? (
        <DataTable
          rows={diff.changed.slice(0, 300)}
          rowKey={(c) => c.event}
          caption="Events whose format differs"
          columns={[
            { header: 'Event', className: 'mono small', cell: (c) => <Link href={`/kernels/diff${query({ a, b, event: c.event })}`}>{c.event}</Link> },
            { header: 'Changes', className: 'small', cell: (c) => c.changes.map((x) => x.text).join('; ') || 'format text differs (no field change)' },
          ]}
        />
      ) : null}
      {diff.changed.length > 300 ? <p className="muted small">The first 300 of {diff.changed.length}; pick an event above to see one.</p> : null}
    </>
  );
}
