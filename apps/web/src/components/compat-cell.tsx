'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { changeText } from '../lib/change-text';
import { useTRPC } from '../lib/trpc';
import { DataTable } from './data-table';
import { Verdict } from './verdict';

interface LayoutField {
  name: string;
  type: string;
  byteOffset: number;
  size: number;
  signed: boolean;
  arrayLength?: number | undefined;
  dynamic?: string | undefined;
}

function fieldText(f: LayoutField | null): string {
  if (!f) return 'absent';
  return `${f.type}${f.arrayLength ? `[${f.arrayLength}]` : ''} ${f.name} at +${f.byteOffset}, ${f.size} B${f.signed ? ', signed' : ''}${f.dynamic ? `, __${f.dynamic}` : ''}`;
}

/** One cell's verdict, reasons and the field diff behind them. */
export function CellDetails({ versionId, profileId, onClose }: { versionId: string; profileId: string; onClose: () => void }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.compat.cell.queryOptions({ versionId, profileId }));
  return (
    <section className="card cell-details" aria-labelledby="cell-heading" aria-live="polite" data-testid="cell-details">
      <div className="panel-head">
        <h2 id="cell-heading">
          {q.data ? (
            <>
              {q.data.version.program}@{q.data.version.version} on {q.data.profile.name}
            </>
          ) : (
            'Cell'
          )}
        </h2>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </div>
      {q.isPending ? <p className="muted">Loading the reasons…</p> : null}
      {q.error ? (
        <p className="alert alert-error" role="alert">
          {q.error.message}
        </p>
      ) : null}
      {q.data && !q.data.cell ? <p className="muted">Not computed yet: the compat job is still running. This panel fills in when it is done.</p> : null}
      {q.data?.cell ? (
        <>
          <p>
            <Verdict verdict={q.data.cell.verdict} />{' '}
            <span className="muted small" data-testid="cell-completeness">
              kernel {q.data.profile.release || 'release unknown'} {q.data.profile.machine},{' '}
              {q.data.profile.complete ? 'complete profile (a missing event is a fact)' : 'partial profile (a missing event is unknown)'}
            </span>
          </p>
          <h3>Reasons</h3>
          {q.data.cell.reasons.length === 0 ? (
            <p className="muted">{q.data.cell.verdict === 'compatible' ? 'Every field it reads is laid out as it was built.' : 'No reason recorded.'}</p>
          ) : (
            <ul>
              {q.data.cell.reasons.map((r, i) => (
                <li key={`${r.kind}-${i}`}>
                  <code className="small">{r.kind}</code> {r.text}
                  {r.diagnostics?.length ? (
                    <ol className="mono small">
                      {r.diagnostics.map((d) => (
                        <li key={d.insnIndex} className="diag">
                          insn {d.insnIndex} <code>{d.insnText}</code>: {d.message}
                        </li>
                      ))}
                    </ol>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
          <h3>Field diff: as built → on this kernel</h3>
          <DataTable
            rows={q.data.cell.fieldDiffs}
            rowKey={(d) => `${d.event}.${d.field}`}
            empty="No field it reads differs from its build-time layout."
            emptyClassName="muted"
            columns={[
              { header: 'Event', className: 'mono small', cell: (d) => d.event },
              { header: 'Field', className: 'mono', cell: (d) => d.field },
              { header: 'Change', cell: (d) => d.changes.map((c) => changeText[c] ?? c).join(', ') },
              {
                header: 'As built',
                className: 'small',
                cell: (d) =>
                  d.built ? `+${d.built.byteOffset ?? '?'}, ${d.built.size ?? '?'} B${d.built.signed ? ', signed' : ''}${d.built.dataLoc ? ', __data_loc' : ''}` : 'by name only',
              },
              { header: 'On this kernel', className: 'small', cell: (d) => fieldText(d.kernel) },
            ]}
          />
          <p className="small">
            <Link href={`/programs/${q.data.version.program}/${q.data.version.version}`}>The version’s manifest and disassembly →</Link>
          </p>
        </>
      ) : null}
    </section>
  );
}
