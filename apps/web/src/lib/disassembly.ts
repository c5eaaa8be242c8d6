// The annotated disassembly of a version (server-side, packages/isa's decoder and formatter): every
// context read shows the field it reads and where its name came from, every map reference the
// map's name, every helper call the helper.
import { decode, formatInstruction, helperName, Opcode } from '@probeyard/isa';

/** What `version.spec` returns, as far as the listing needs it (packages/compat `ProgramSpecJson`). */
export interface SpecJson {
  programs: { name: string; section: string; attach: { kind: string; system?: string; event?: string }; instructions: string }[];
  maps: { name: string; typeName: string; keySize: number; valueSize: number; maxEntries: number; globalSection?: string; display?: { kind: string; unit?: string } }[];
}

/** packages/compat `Manifest`, as far as the page needs it. */
export interface ManifestJson {
  attachPoints: string[];
  fields: { program: string; insnIndex: number; event: string; field: string; kind: string; source: 'core' | 'asm' | 'verifier'; byteOffset?: number; size?: number; signed?: boolean; dataLoc: boolean }[];
  pinned: { program: string; event: string; insnIndex: number; byteOffset: number; size: number }[];
  layoutPinned: boolean;
  helpers: { id: number; name: string }[];
  mapTypes: string[];
}

export const nameSourceText: Record<string, string> = {
  core: 'CO-RE relocation',
  asm: 'assembly symbol',
  verifier: 'named from the declared build layout',
};

export interface Note {
  kind: 'field' | 'map' | 'pinned' | 'helper';
  text: string;
}

export interface ListingLine {
  insnIndex: number;
  text: string;
  notes: Note[];
}

export interface Listing {
  program: string;
  section: string;
  attach: string;
  lines: ListingLine[];
  error?: string;
}

function bytesOfHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function annotatedListings(spec: SpecJson, manifest: ManifestJson): Listing[] {
  return spec.programs.map((p) => {
    const attach = p.attach.kind === 'tracepoint' ? `${p.attach.system}/${p.attach.event}` : p.attach.kind;
    const fields = new Map<number, Note[]>();
    const add = (i: number, n: Note) => fields.set(i, [...(fields.get(i) ?? []), n]);
    for (const f of manifest.fields) {
      if (f.program !== p.name) continue;
      const layout = f.byteOffset !== undefined ? ` (built: +${f.byteOffset}, ${f.size} bytes${f.signed ? ', signed' : ''})` : '';
      const what = f.kind === 'byte-offset' ? 'reads' : f.kind === 'exists' ? 'checks that exists:' : `${f.kind} of`;
      add(f.insnIndex, { kind: 'field', text: `${what} ${f.event.split('/').pop()}.${f.field}${f.dataLoc ? ' (__data_loc locator)' : ''}${layout}: ${nameSourceText[f.source] ?? f.source}` });
    }
    for (const x of manifest.pinned) {
      if (x.program !== p.name) continue;
      add(x.insnIndex, { kind: 'pinned', text: `reads +${x.byteOffset} (${x.size} bytes) of ${x.event}: layout-pinned offset, unnamed` });
    }
    let lines: ListingLine[] = [];
    let error: string | undefined;
    try {
      lines = decode(bytesOfHex(p.instructions)).map((insn) => {
        const notes = [...(fields.get(insn.insnIndex) ?? [])];
        if (insn.opcode === Opcode.lddw && (insn.src === 1 || insn.src === 2 || insn.src === 5 || insn.src === 6)) {
          const m = spec.maps[insn.imm];
          const value = insn.src === 2 || insn.src === 6;
          if (m) notes.push({ kind: 'map', text: `${value ? `value of map ${m.name}${insn.immHi ? ` +${insn.immHi}` : ''}` : `map ${m.name}`} (${m.typeName})` });
        }
        if (insn.opcode === Opcode.call && insn.src === 0) {
          const h = helperName(insn.imm);
          if (h) notes.push({ kind: 'helper', text: `bpf_${h}` });
        }
        return { insnIndex: insn.insnIndex, text: formatInstruction(insn), notes };
      });
    } catch (err) {
      error = `disassembly failed: ${(err as Error).message}`;
    }
    return { program: p.name, section: p.section, attach, lines, ...(error ? { error } : {}) };
  });
}
