// Parsers for the text that llvm-readelf, llvm-objdump and bpftool print, so tests can compare
// the decoders with those tools' own reading of the fixture objects.

export interface ReadelfSection {
  index: number;
  name: string;
  type: string;
  byteOffset: number;
  size: number;
  entrySize: number;
  flags: string;
  link: number;
  info: number;
  align: number;
}

export interface ReadelfSymbol {
  index: number;
  value: number;
  size: number;
  type: string;
  bind: string;
  ndx: string;
  name: string;
}

export interface ReadelfRelocation {
  section: string;
  byteOffset: number;
  type: string;
  symbol: string;
}

export interface Readelf {
  sections: ReadelfSection[];
  symbols: ReadelfSymbol[];
  relocations: ReadelfRelocation[];
  dataEncoding: string;
}

export function parseReadelf(text: string): Readelf {
  const lines = text.split('\n');
  const sections: ReadelfSection[] = [];
  const symbols: ReadelfSymbol[] = [];
  const relocations: ReadelfRelocation[] = [];
  let relSection: string | undefined;
  let inSymbols = false;
  let dataEncoding = '';
  for (const line of lines) {
    const data = /^\s+Data:\s+(.*)$/.exec(line);
    if (data) dataEncoding = data[1] as string;
    const sec = /^\s+\[\s*(\d+)\]\s(.*)$/.exec(line);
    if (sec) {
      const tokens = (sec[2] as string).trim().split(/\s+/);
      const align = Number(tokens.pop());
      const info = Number(tokens.pop());
      const link = Number(tokens.pop());
      let flags = '';
      if (!/^[0-9a-f]{2}$/.test(tokens.at(-1) as string)) flags = tokens.pop() as string;
      const entrySize = Number.parseInt(tokens.pop() as string, 16);
      const size = Number.parseInt(tokens.pop() as string, 16);
      const byteOffset = Number.parseInt(tokens.pop() as string, 16);
      tokens.pop(); // address
      const type = tokens.pop() as string;
      sections.push({ index: Number(sec[1]), name: tokens.join(' '), type, byteOffset, size, entrySize, flags, link, info, align });
      continue;
    }
    if (/^Symbol table/.test(line)) {
      inSymbols = true;
      continue;
    }
    const rs = /^Relocation section '(.*)' at offset/.exec(line);
    if (rs) {
      inSymbols = false;
      relSection = rs[1];
      continue;
    }
    if (inSymbols) {
      const m = /^\s*(\d+):\s+([0-9a-f]+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s?(.*)$/.exec(line);
      if (m) {
        symbols.push({
          index: Number(m[1]),
          value: Number.parseInt(m[2] as string, 16),
          size: Number(m[3]),
          type: m[4] as string,
          bind: m[5] as string,
          ndx: m[7] as string,
          name: m[8] as string,
        });
      }
      continue;
    }
    if (relSection !== undefined) {
      const m = /^([0-9a-f]{16})\s+[0-9a-f]{16}\s+(\S+)\s+[0-9a-f]{16}\s+(.*)$/.exec(line);
      if (m) relocations.push({ section: relSection, byteOffset: Number.parseInt(m[1] as string, 16), type: m[2] as string, symbol: m[3] as string });
    }
  }
  return { sections, symbols, relocations, dataEncoding };
}

export interface ObjdumpInsn {
  section: string;
  insnIndex: number;
  hex: string;
  text: string;
}

export interface ObjdumpListing {
  /** Labels (function symbols and LBB labels) per section: name → byte offset. */
  labels: { section: string; name: string; byteOffset: number }[];
  insns: ObjdumpInsn[];
  relocations: { section: string; byteOffset: number; type: string; symbol: string }[];
}

export function parseObjdump(text: string): ObjdumpListing {
  const out: ObjdumpListing = { labels: [], insns: [], relocations: [] };
  let section = '';
  for (const line of text.split('\n')) {
    const s = /^Disassembly of section (.*):$/.exec(line);
    if (s) {
      section = s[1] as string;
      continue;
    }
    const label = /^([0-9a-f]{16}) <(.*)>:$/.exec(line);
    if (label) {
      out.labels.push({ section, name: label[2] as string, byteOffset: Number.parseInt(label[1] as string, 16) });
      continue;
    }
    const insn = /^\s+(\d+):\t((?:[0-9a-f]{2} ){7,15}[0-9a-f]{2})\t(.*)$/.exec(line);
    if (insn) {
      out.insns.push({ section, insnIndex: Number(insn[1]), hex: (insn[2] as string).replaceAll(' ', ''), text: insn[3] as string });
      continue;
    }
    const rel = /^\t\t([0-9a-f]{16}):\s+(\S+)\t(.*)$/.exec(line);
    if (rel) out.relocations.push({ section, byteOffset: Number.parseInt(rel[1] as string, 16), type: rel[2] as string, symbol: rel[3] as string });
  }
  return out;
}

/**
 * The immediate a CO-RE relocation patched, read from objdump's text: the offset of a load or
 * store (`*(u32 *)(r6 + 24)`), or the constant of `r1 = 8`, `r1 = 37 ll`, `r1 <<= 52`.
 */
export function patchedValue(text: string): number | undefined {
  const mem = /\(r\d+ ([+-]) (\d+)\)/.exec(text);
  if (mem) return (mem[1] === '-' ? -1 : 1) * Number(mem[2]);
  const alu = /^[rw]\d+ (?:=|\+=|<<=|>>=|s>>=) (-?\d+)(?: ll)?$/.exec(text);
  if (alu) return Number(alu[1]);
  return undefined;
}
