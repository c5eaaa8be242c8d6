import type { Metadata } from 'next';
import Link from 'next/link';
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
      {compat.length === 0 ? (
        <p className="empty">No verdicts yet: they appear as the compat job runs, once the tenant has kernel profiles (Kernels page, or agents enrolling).</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Verdict on each kernel profile</caption>
          <thead>
            <tr>
              <th scope="col">Kernel profile</th>
              <th scope="col">Verdict</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {compat.map((c) => (
              <tr key={c.profileId}>
                <td>
                  <Link href={`/kernels/${c.profile}`}>{c.profile}</Link>
                </td>
                <td>
                  <Link href={`/compat${query({ program: name, cell: `${c.versionId}:${c.profileId}` })}`} aria-label={`${c.verdict} on ${c.profile}: reasons and field diff`}>
                    <Verdict verdict={c.verdict} />
                  </Link>
                </td>
                <td className="small">{c.reasons.map((r) => r.text).join('; ') || (c.fieldDiffs.length ? c.fieldDiffs.map((d) => d.text).join('; ') : 'same layout')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Manifest: fields read by name</h2>
      {m.layoutPinned ? (
        <p className="alert alert-error">
          Some reads use hard-coded offsets nothing names: this version only runs where those events are laid out byte for byte as it was built.
        </p>
      ) : null}
      {m.fields.length === 0 && m.pinned.length === 0 ? (
        <p className="empty">This version reads no event field.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Every field read, with where its name came from</caption>
          <thead>
            <tr>
              <th scope="col">Program</th>
              <th scope="col">Insn</th>
              <th scope="col">Event</th>
              <th scope="col">Field</th>
              <th scope="col">Access</th>
              <th scope="col">Built for</th>
              <th scope="col">Name from</th>
            </tr>
          </thead>
          <tbody>
            {m.fields.map((f) => (
              <tr key={`${f.program}-${f.insnIndex}-${f.kind}`}>
                <td>{f.program}</td>
                <td className="num">{f.insnIndex}</td>
                <td className="mono small">{f.event}</td>
                <td className="mono">
                  {f.field}
                  {f.dataLoc ? <span className="muted small"> (__data_loc)</span> : null}
                </td>
                <td className="small">{f.kind}</td>
                <td className="small">{f.byteOffset !== undefined ? `+${f.byteOffset}, ${f.size} B${f.signed ? ', signed' : ''}` : 'by name only'}</td>
                <td className="small">{nameSourceText[f.source] ?? f.source}</td>
              </tr>
            ))}
            {m.pinned.map((x) => (
              <tr key={`${x.program}-${x.insnIndex}-pinned`}>
                <td>{x.program}</td>
                <td className="num">{x.insnIndex}</td>
                <td className="mono small">{x.event}</td>
                <td className="muted">(unnamed)</td>
                <td className="small">read</td>
                <td className="small">
                  +{x.byteOffset}, {x.size} B
                </td>
                <td className="small">layout-pinned offset</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

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
          {s.maps.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <table className="list">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col" className="num">
                    Key / value
                  </th>
                  <th scope="col" className="num">
                    Entries
                  </th>
                  <th scope="col">Shown as</th>
                </tr>
              </thead>
              <tbody>
                {s.maps.map((mp) => (
                  <tr key={mp.name}>
                    <td className="mono">{mp.name}</td>
                    <td className="small">{mp.typeName}</td>
                    <td className="num small">
                      {mp.keySize} / {mp.valueSize} B
                    </td>
                    <td className="num small">{mp.maxEntries}</td>
                    <td className="small">{shownAs(displays[mp.name] as DisplayJson | undefined)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>

      <h2>Verifier report</h2>
      <p>{report.ok ? 'Every program was proved safe with the kernel’s rules.' : 'Refused.'}</p>
      <table className="list">
        <thead>
          <tr>
            <th scope="col">Program</th>
            <th scope="col">Verdict</th>
            <th scope="col">Context</th>
            <th scope="col" className="num">
              Insns processed
            </th>
            <th scope="col" className="num">
              States (peak)
            </th>
            <th scope="col" className="num">
              Time
            </th>
          </tr>
        </thead>
        <tbody>
          {report.programs.map((r) => (
            <tr key={r.program}>
              <td>{r.program}</td>
              <td>{r.ok ? 'safe' : 'refused'}</td>
              <td className="small">{r.context === 'raw' ? 'raw record (fields by name, checked per kernel)' : 'tracepoint record'}</td>
              <td className="num">{r.stats.insnsProcessed}</td>
              <td className="num">
                {r.stats.states} ({r.stats.peakStates})
              </td>
              <td className="num">{r.stats.timeMs.toFixed(1)} ms</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Annotated disassembly</h2>
      <p className="muted small">Every context read shows the field it reads and where the name came from; every map reference, the map.</p>
      {listings.map((l) => (
        <ListingView key={l.program} l={l} />
      ))}
    </>
  );
}
