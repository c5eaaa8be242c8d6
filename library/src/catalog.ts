// The catalog: every library program with its README line, events, maps and their display hints,
// and its verdict on every kernel of the tables. `catalog.json` is this, computed by
// scripts/write-catalog.ts with packages/compat; test/catalog.test.ts recomputes it and requires
// the committed file to be equal.
import { readFileSync } from 'node:fs';
import { type DisplayHint, type ProgramSpec, readProgramSpec, type SpecMap, valueTypeOfBtf, checkCompat, type VerdictStatus } from '@probeyard/compat';
import { readBpfObject } from '@probeyard/formats';
import { verdictCell } from './cell.js';
import { libraryDisplayHint } from './display.js';
import { bundledKernelProfile, type LibraryKernel, libraryKernels } from './kernels.js';
import { objectPath } from './paths.js';
import { type LibraryProgram, libraryPrograms } from './programs.js';

export interface CatalogMap {
  name: string;
  /** `BPF_MAP_TYPE_*` name (`hash`, `array`, `percpu_array`, `ringbuf`, …). */
  type: string;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  display: DisplayHint;
  /** For an `events` map: the BTF struct its records are (`<name>_events` → `struct <name>_event`). */
  recordType?: string;
  /** For a state map hidden by metadata: what it holds. */
  holds?: string;
}

export interface CatalogVerdict {
  status: VerdictStatus;
  /** The table cell (see cell.ts). */
  cell: string;
  /** Events the program attaches to that the kernel lacks (`incompatible: event-missing`: the kernels are complete dumps). */
  missingEvents?: string[];
}

export interface CatalogProgram {
  name: string;
  summary: string;
  source: string;
  object: string;
  /** SHA-256 of the object (the digest the registry gives the version). */
  digest: string;
  /** `system/event` of each program of the object, in object order. */
  events: string[];
  maps: CatalogMap[];
  /** Kernel id → verdict. */
  compat: Record<string, CatalogVerdict>;
}

export interface Catalog {
  v: 1;
  kernels: { id: string; column: string; release: string; corpus: string; note: string }[];
  programs: CatalogProgram[];
}

/** A library program's spec, read from its committed object. */
export function librarySpec(name: string): Promise<ProgramSpec> {
  return readProgramSpec(new Uint8Array(readFileSync(objectPath(name))));
}

/** `system/event` of every tracepoint program of the spec. */
export function attachEvents(spec: ProgramSpec): string[] {
  return spec.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}/${p.attach.event}`] : []));
}

/** The events every library program attaches to, sorted (what the bundled kernels hold). */
export async function libraryEvents(): Promise<string[]> {
  const all = new Set<string>();
  for (const p of libraryPrograms) for (const e of attachEvents(await librarySpec(p.name))) all.add(e);
  return [...all].sort();
}

function recordTypeOf(bytes: Uint8Array, map: SpecMap): string | undefined {
  const name = map.name.endsWith('_events') ? `${map.name.slice(0, -'_events'.length)}_event` : undefined;
  if (name === undefined) throw new Error(`catalog: events map ${map.name}: name it <name>_events after its record struct <name>_event`);
  const btf = readBpfObject(bytes).btf;
  const id = btf?.typeIdsByName(name).find((i) => btf.kindOf(i) === 'struct');
  if (btf === undefined || id === undefined || valueTypeOfBtf(btf, id) === undefined) {
    throw new Error(`catalog: events map ${map.name}: struct ${name} is not in the object's BTF`);
  }
  return name;
}

function catalogMaps(bytes: Uint8Array, spec: ProgramSpec, program: LibraryProgram): CatalogMap[] {
  return spec.maps.map((m) => {
    const display = libraryDisplayHint(m, program.state);
    const out: CatalogMap = { name: m.name, type: m.typeName, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, display };
    if (display.kind === 'events') out.recordType = recordTypeOf(bytes, m);
    const holds = program.state[m.name];
    if (holds !== undefined) out.holds = holds;
    return out;
  });
}

/** Computes the catalog from the committed objects and the bundled kernels. */
export async function computeCatalog(kernels: readonly LibraryKernel[] = libraryKernels): Promise<Catalog> {
  const events = await libraryEvents();
  const profiles = await Promise.all(kernels.map((k) => bundledKernelProfile(k, events)));
  const programs: CatalogProgram[] = [];
  for (const p of libraryPrograms) {
    const bytes = new Uint8Array(readFileSync(objectPath(p.name)));
    const spec = await readProgramSpec(bytes);
    const compat: Record<string, CatalogVerdict> = {};
    kernels.forEach((k, i) => {
      const v = checkCompat(spec, profiles[i]!);
      const missing = [...new Set(v.reasons.filter((r) => r.kind === 'event-missing').map((r) => r.event))];
      compat[k.id] = { status: v.status, cell: verdictCell(v), ...(missing.length > 0 ? { missingEvents: missing } : {}) };
    });
    programs.push({
      name: p.name,
      summary: p.summary,
      source: `programs/${p.name}.c`,
      object: `programs/${p.name}.o`,
      digest: spec.digest,
      events: attachEvents(spec),
      maps: catalogMaps(bytes, spec, p),
      compat,
    });
  }
  return { v: 1, kernels: kernels.map((k) => ({ id: k.id, column: k.column, release: k.release, corpus: k.corpus, note: k.note })), programs };
}

/** The catalog as committed: JSON with two-space indentation and a final newline. */
export function formatCatalog(catalog: Catalog): string {
  return `${JSON.stringify(catalog, null, 2)}\n`;
}
