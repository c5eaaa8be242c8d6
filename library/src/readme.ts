// The generated sections of library/README.md, each between `<!-- name -->` and
// `<!-- /name -->`: the programs with their maps and display hints, the compatibility table, and
// what each kernel lacks. Rendered from the catalog; test/catalog.test.ts requires the README to
// hold exactly what this renders.
import type { DisplayHint } from '@probeyard/compat';
import type { Catalog } from './catalog.js';

function hintText(d: DisplayHint): string {
  const unit = d.unit === undefined ? '' : ` (${d.unit})`;
  const by = d.source === 'metadata' ? ', by metadata' : '';
  return `${d.kind}${unit}${by}`;
}

/** One row per program: its maps with their display hints, its events, its README line. */
export function renderProgramsTable(catalog: Catalog): string {
  const lines = ['| program | events | maps (display) | what it does |', '|---|---|---|---|'];
  for (const p of catalog.programs) {
    const events = [...new Set(p.events)].map((e) => `\`${e}\``).join(', ');
    const maps = p.maps.map((m) => `\`${m.name}\`: ${hintText(m.display)}`).join('; ');
    lines.push(`| \`${p.name}\` | ${events} | ${maps} | ${p.summary} |`);
  }
  return lines.join('\n');
}

/** Programs × kernels, each cell the verdict (see cell.ts). */
export function renderCompatTable(catalog: Catalog): string {
  const lines = [`| program | ${catalog.kernels.map((k) => k.column).join(' | ')} |`, `|${catalog.kernels.map(() => '---').concat('---').join('|')}|`];
  for (const p of catalog.programs) lines.push(`| \`${p.name}\` | ${catalog.kernels.map((k) => p.compat[k.id]!.cell).join(' | ')} |`);
  return lines.join('\n');
}

/** Per kernel: the programs it cannot run for lack of an event, and what the others adapt to. */
export function renderLacks(catalog: Catalog): string {
  const lines: string[] = [];
  for (const k of catalog.kernels) {
    const missing: string[] = [];
    const adapted: string[] = [];
    for (const p of catalog.programs) {
      const v = p.compat[k.id]!;
      if ((v.missingEvents ?? []).length > 0) missing.push(`${(v.missingEvents ?? []).map((e) => `\`${e}\``).join(', ')} (\`${p.name}\`)`);
      const notes = v.status === 'relocated' ? v.cell.replace(/^relocated: ?/, '').split(', ').filter((n) => / (inline|__data_loc|__rel_loc)$|^no /.test(n)) : [];
      if (notes.length > 0) adapted.push(`\`${p.name}\` (${notes.join(', ')})`);
    }
    const parts = [`- **${k.column}** (${k.note}):`];
    parts.push(missing.length === 0 ? 'has every event;' : `lacks ${missing.join(', ')};`);
    parts.push(adapted.length === 0 ? 'no field adaptation needed.' : `adapts: ${adapted.join(', ')}.`);
    lines.push(parts.join(' '));
  }
  return lines.join('\n');
}

/** Replaces each `<!-- name -->…<!-- /name -->` section of `text`; throws when a marker is missing. */
export function replaceSections(text: string, sections: Readonly<Record<string, string>>): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const open = `<!-- ${name} -->`;
    const close = `<!-- /${name} -->`;
    const a = out.indexOf(open);
    const b = out.indexOf(close);
    if (a < 0 || b < a) throw new Error(`readme: no ${open} … ${close} section`);
    out = `${out.slice(0, a + open.length)}\n${body}\n${out.slice(b)}`;
  }
  return out;
}

/** Every generated section of the README. */
export function readmeSections(catalog: Catalog): Record<string, string> {
  return { programs: renderProgramsTable(catalog), compat: renderCompatTable(catalog), lacks: renderLacks(catalog) };
}
