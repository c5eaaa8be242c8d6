import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { DataTable } from '../../../../../components/data-table';
import { Verdict } from '../../../../../components/verdict';
import { type Listing, type ManifestJson, annotatedListings, nameSourceText, type SpecJson } from '../../../../../lib/disassembly';
import { formatBytes, formatTime, query } from '../../../../../lib/format';
import { api, orNotFound } from '../../../../../lib/session';

type Params = Promise<{ name: string; version: string }>;

/** A map's display hint as `version.spec` resolves it (packages/compat `DisplayHint`). */
interface DisplayJson {
  kind: string;
  unit?: string;
  source?: string;
}

/** "log2-histogram (us), by convention", "counts", "hidden, by convention". */
function shownAs(d: DisplayJson | undefined): string {
  if (!d) return '—';
  return `${d.kind}${d.unit ? ` (${d.unit})` : ''}${d.source === 'convention' ? ', by convention' : ''}`;
}

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const p = await params;
  return { title: `${decodeURIComponent(p.name)}@${decodeURIComponent(p.version)}` };
}

interface ProgramReport {
  program: string;
  section: string;
  ok: boolean;
  context: string;
  diagnostics: { insnIndex: number; insnText: string; message: string }[];
  stats: { insnsProcessed: number; states: number; peakStates: number; timeMs: number };
}

/** One row of the manifest's table: a field read by name, or an unnamed layout-pinned read (`field` null). */
interface FieldRow {
  key: string;
  program: string;
  insnIndex: number;
  event: string;
  field: ReactNode | null;
  access: string;
  builtFor: string;
  nameFrom: string;
}

/** Every field read by name, then every read at a layout-pinned offset nothing names. */
function fieldRows(m: ManifestJson): FieldRow[] {
  return [
    ...m.fields.map((f) => ({
      key: `${f.program}-${f.insnIndex}-${f.kind}`,
      program: f.program,
      insnIndex: f.insnIndex,
      event: f.event,
      field: (
        <>
          {f.field}
          {f.dataLoc ? <span className="muted small"> (__data_loc)</span> : null}
        </>
      ),
      access: f.kind,
      builtFor: f.byteOffset !== undefined ? `+${f.byteOffset}, ${f.size} B${f.signed ? ', signed' : ''}` : 'by name only',
      nameFrom: nameSourceText[f.source] ?? f.source,
    })),
    ...m.pinned.map((x) => ({
      key: `${x.program}-${x.insnIndex}-pinned`,
      program: x.program,
      insnIndex: x.insnIndex,
      event: x.event,
      field: null,
      access: 'read',
      builtFor: `+${x.byteOffset}, ${x.size} B`,
      nameFrom: 'layout-pinned offset',
    })),
  ];
}

function ListingView({ l }: { l: Listing }) {
  return (
    <section aria-labelledby={`listing-${l.program}`}>
      <h3 id={`listing-${l.program}`}>
        {l.program} <span className="muted small">({l.section}, attached to {l.attach})</span>
      </h3>
      {l.error ? (
        <p className="alert alert-error">{l.error}</p>
      ) : (
        <figure aria-label={`Annotated disassembly of ${l.program}`} className="listing-figure">
        <pre className="listing">
          {l.lines.map((line) => (
            <span key={line.insnIndex}>
              <span className="idx">{String(line.insnIndex).padStart(4, ' ')}: </span>
              {line.text}
              {line.notes.map((n) => (
                <span key={n.text} className={n.kind === 'map' ? 'mapref' : 'ann'}>
                  {'    ; '}
                  {n.text}
                </span>
              ))}
              {'\n'}
            </span>
          ))}
        </pre>
        </figure>
      )}
    </section>
  );
}

export default async function VersionPage({ params, searchParams }: { params: Params; searchParams: Promise<{ published?: string }> }) {
  const p = await params;
  const name = decodeURIComponent(p.name);
  const version = decodeURIComponent(p.version);
  const published = (await searchParams).published === '1';
  const client = await api();
  const [{ version: v, compat }, { spec, manifest, displays }] = await Promise.all([
    orNotFound(client.version.get.query({ name, version })),
    orNotFound(client.version.spec.query({ name, version })),
  ]);
  const m = manifest as unknown as ManifestJson;
  const s = spec as unknown as SpecJson;
  const report = v.verifierReport as { ok: boolean; programs: ProgramReport[] };
  const listings = annotatedListings(s, m);
  return (
    <>
      <p className="crumbs">
        <Link href="/programs">Programs</Link> / <Link href={`/programs/${name}`}>{name}</Link> /
      </p>
      <h1>
        {name}@{v.version} <span className="badge badge-abi">{v.abi}</span> {v.yanked ? <span className="badge badge-yanked">yanked</span> : null}
      </h1>
      {published ? (
        <p className="alert alert-ok" role="status">
          Published. Compatibility with every kernel profile is being computed; the matrix fills in as it runs.
        </p>
      ) : null}
      {v.yanked ? (
        <p className="alert alert-error">
          Yanked {formatTime(v.yanked.at)}: {v.yanked.reason}. It stays readable; new deployments of it are refused.
        </p>
      ) : null}
      <dl className="kv">
        <dt>Digest (sha256)</dt>
        <dd className="mono small">{v.digest}</dd>
        <dt>Artifact</dt>
        <dd>
          {v.artifactKind === 'elf' ? 'ELF object' : 'Probeyard assembly'}, {formatBytes(v.size)}
        </dd>
        <dt>Published</dt>
        <dd>{formatTime(v.publishedAt)}</dd>
        <dt>Attaches to</dt>
        <dd>{m.attachPoints.join(', ') || '—'}</dd>
      </dl>

      <h2>Compatibility</h2>
      <DataTable
        rows={compat}
        rowKey={(c) => c.profileId}
        caption="Verdict on each kernel profile"
        empty="No verdicts yet: they appear as the compat job runs, once the tenant has kernel profiles (Kernels page, or agents enrolling)."
        columns={[
          { header: 'Kernel profile', cell: (c) => <Link href={`/kernels/${c.profile}`}>{c.profile}</Link> },
          {
            header: 'Verdict',
            cell: (c) => (
              <Link href={`/compat${query({ program: name, cell: `${c.versionId}:${c.profileId}` })}`} aria-label={`${c.verdict} on ${c.profile}: reasons and field diff`}>
                <Verdict verdict={c.verdict} />
              </Link>
            ),
          },
          {
            header: 'Why',
            className: 'small',
            cell: (c) => c.reasons.map((r) => r.text).join('; ') || (c.fieldDiffs.length ? c.fieldDiffs.map((d) => d.text).join('; ') : 'same layout'),
          },
        ]}
      />

      <h2>Manifest: fields read by name</h2>
      {m.layoutPinned ? (
        <p className="alert alert-error">
          Some reads use hard-coded offsets nothing names: this version only runs where those events are laid out byte for byte as it was built.
        </p>
      ) : null}
      <DataTable
        rows={fieldRows(m)}
        rowKey={(r) => r.key}
        caption="Every field read, with where its name came from"
        empty="This version reads no event field."
        columns={[
          { header: 'Program', cell: (r) => r.program },
          { header: 'Insn', numeric: true, cell: (r) => r.insnIndex },
          { header: 'Event', className: 'mono small', cell: (r) => r.event },
          { header: 'Field', className: (r) => (r.field === null ? 'muted' : 'mono'), cell: (r) => r.field ?? '(unnamed)' },
          { header: 'Access', className: 'small', cell: (r) => r.access },
          { header: 'Built for', className: 'small', cell: (r) => r.builtFor },
          { header: 'Name from', className: 'small', cell: (r) => r.nameFrom },
        ]}
      />

      <div className="grid2">
        <section aria-labelledby="helpers-heading">
          <h2 id="helpers-heading">Helpers</h2>
          {m.helpers.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul className="mono small">
              {m.helpers.map((h) => (
                <li key={h.id}>
                  {h.name} <span className="muted">({h.id})</span>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section aria-labelledby="maps-heading">
          <h2 id="maps-heading">Maps</h2>
          <DataTable
            rows={s.maps}
            rowKey={(mp) => mp.name}
            empty="None."
            emptyClassName="muted"
            columns={[
              { header: 'Name', className: 'mono', cell: (mp) => mp.name },
              { header: 'Type', className: 'small', cell: (mp) => mp.typeName },
              { header: 'Key / value', numeric: true, className: 'small', cell: (mp) => `${mp.keySize} / ${mp.valueSize} B` },
              { header: 'Entries', numeric: true, className: 'small', cell: (mp) => mp.maxEntries },
              { header: 'Shown as', className: 'small', cell: (mp) => shownAs(displays[mp.name] as DisplayJson | undefined) },
            ]}
          />
        </section>
      </div>

      <h2>Verifier report</h2>
      <p>{report.ok ? 'Every program was proved safe with the kernel’s rules.' : 'Refused.'}</p>
      <DataTable
        rows={report.programs}
        rowKey={(r) => r.program}
        columns={[
          { header: 'Program', cell: (r) => r.program },
          { header: 'Verdict', cell: (r) => (r.ok ? 'safe' : 'refused') },
          { header: 'Context', className: 'small', cell: (r) => (r.context === 'raw' ? 'raw record (fields by name, checked per kernel)' : 'tracepoint record') },
          { header: 'Insns processed', numeric: true, cell: (r) => r.stats.insnsProcessed },
          { header: 'States (peak)', numeric: true, cell: (r) => `${r.stats.states} (${r.stats.peakStates})` },
          { header: 'Time', numeric: true, cell: (r) => `${r.stats.timeMs.toFixed(1)} ms` },
        ]}
      />

      <h2>Annotated disassembly</h2>
      <p className="muted small">Every context read shows the field it reads and where the name came from; every map reference, the map.</p>
      {listings.map((l) => (
        <ListingView key={l.program} l={l} />
      ))}
    </>
  );
}
