// One cell of a compatibility table: the verdict's status, and what made it so.
import type { Verdict } from '@probeyard/compat';

/**
 * `compatible`; `relocated: F, …` naming the fields whose reads moved or changed width, `no F` a
 * field a `field exists` check found absent, `F inline` / `F __data_loc` a field the program
 * checked in one representation that this kernel has in the other; `unknown: …` /
 * `incompatible: …` with the kinds of the reasons and their fields.
 */
export function verdictCell(v: Verdict): string {
  if (v.status === 'incompatible' || v.status === 'unknown') {
    return `${v.status}: ${[...new Set(v.reasons.map((r) => `${r.kind}${r.field ? ` ${r.field}` : ''}`))].join(', ')}`;
  }
  if (v.status === 'compatible') return 'compatible';
  const notes: string[] = [];
  for (const p of v.plan.programs) {
    for (const f of p.fixups) {
      if (f.action !== 'patch') continue;
      if (f.access.kind === 'byte-offset' && f.changed) notes.push(f.access.field);
      if (f.access.kind === 'exists' && f.after.imm === 0) {
        if (f.target === undefined) notes.push(`no ${f.access.field}`);
        else notes.push(`${f.access.field} ${f.target.dynamic === undefined ? 'inline' : `__${f.target.dynamic}`}`);
      }
    }
  }
  return notes.length === 0 ? 'relocated' : `relocated: ${[...new Set(notes)].join(', ')}`;
}
