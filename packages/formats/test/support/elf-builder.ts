// A minimal ELF64 relocatable writer for tests: sections, symbols and REL/RELA entries, either
// byte order. Enough to build edge cases clang never emits. Not part of the package API.

export interface SectionDef {
  name: string;
  /** SHT_* (default PROGBITS). */
  type?: number;
  /** SHF_* (default ALLOC, plus EXECINSTR for `code`). */
  flags?: number;
  data?: Uint8Array;
  /** For NOBITS. */
  size?: number;
  code?: boolean;
}

export interface SymbolDef {
  name: string;
  /** Section name, or undefined for an undefined (extern) symbol. */
  section?: string;
  value?: number;
  size?: number;
  type?: number;
  bind?: number;
}

export interface RelDef {
  /** Name of the section patched. */
  section: string;
  byteOffset: number;
  type: number;
  symbol: string;
  addend?: number;
}

/** One BPF instruction, 8 bytes, in the given byte order. */
export function insn(op: number, dst: number, src: number, off: number, imm: number, littleEndian = true): Uint8Array {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  b[0] = op;
  b[1] = littleEndian ? (src << 4) | dst : (dst << 4) | src;
  v.setInt16(2, off, littleEndian);
  v.setInt32(4, imm, littleEndian);
  return b;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function buildElf(def: { sections: SectionDef[]; symbols?: SymbolDef[]; rels?: RelDef[]; rela?: boolean; littleEndian?: boolean; machine?: number }): Uint8Array {
  const le = def.littleEndian ?? true;
  const symbols = def.symbols ?? [];
  const rels = def.rels ?? [];
  const strtab: number[] = [0];
  const str = (s: string) => {
    if (s === '') return 0;
    const off = strtab.length;
    for (const c of new TextEncoder().encode(s)) strtab.push(c);
    strtab.push(0);
    return off;
  };
  // section list: null, user sections, rel sections, .symtab, .strtab
  const user = def.sections;
  const relTargets = [...new Set(rels.map((r) => r.section))];
  const names = ['', ...user.map((s) => s.name), ...relTargets.map((t) => `${def.rela ? '.rela' : '.rel'}${t}`), '.symtab', '.strtab'];
  const indexOf = (name: string) => {
    const i = names.indexOf(name);
    if (i < 0) throw new Error(`no section ${name}`);
    return i;
  };
  const symtabIndex = names.length - 2;
  const strtabIndex = names.length - 1;
  const nameOffsets = names.map(str);
  const symNameOffsets = symbols.map((s) => str(s.name));
  const symbolIndexes = new Map<string, number>();
  symbols.forEach((s, i) => { if (!symbolIndexes.has(s.name)) symbolIndexes.set(s.name, i); });
  const symIndex = (name: string) => {
    const i = symbolIndexes.get(name) ?? -1;
    if (i < 0) throw new Error(`no symbol ${name}`);
    return i + 1;
  };

  const w = (size: number) => {
    const b = new Uint8Array(size);
    return { b, v: new DataView(b.buffer) };
  };
  const setU64 = (v: DataView, at: number, n: number) => {
    const lo = n >>> 0;
    const hi = Math.floor(n / 0x1_0000_0000) >>> 0;
    v.setUint32(at, le ? lo : hi, le);
    v.setUint32(at + 4, le ? hi : lo, le);
  };
  const symtab = w(24 * (symbols.length + 1));
  symbols.forEach((s, i) => {
    const at = 24 * (i + 1);
    symtab.v.setUint32(at, symNameOffsets[i] as number, le);
    symtab.b[at + 4] = ((s.bind ?? 1) << 4) | (s.type ?? 2);
    symtab.v.setUint16(at + 6, s.section === undefined ? 0 : indexOf(s.section), le);
    setU64(symtab.v, at + 8, s.value ?? 0);
    setU64(symtab.v, at + 16, s.size ?? 0);
  });
  const relData = relTargets.map((t) => {
    const list = rels.filter((r) => r.section === t);
    const size = def.rela ? 24 : 16;
    const out = w(size * list.length);
    list.forEach((r, i) => {
      setU64(out.v, i * size, r.byteOffset);
      const sym = symIndex(r.symbol);
      out.v.setUint32(i * size + (le ? 0 : 4) + 8, r.type, le);
      out.v.setUint32(i * size + (le ? 4 : 0) + 8, sym, le);
      if (def.rela) setU64(out.v, i * size + 16, r.addend ?? 0);
    });
    return out.b;
  });
  const contents: (Uint8Array | undefined)[] = [undefined, ...user.map((s) => (s.type === 8 ? undefined : (s.data ?? new Uint8Array(0)))), ...relData, symtab.b, new Uint8Array(strtab)];
  let at = 64;
  const offsets: number[] = [];
  const body: Uint8Array[] = [];
  for (const c of contents) {
    while (at % 8 !== 0) {
      body.push(new Uint8Array(1));
      at++;
    }
    offsets.push(at);
    if (c !== undefined) {
      body.push(c);
      at += c.length;
    }
  }
  while (at % 8 !== 0) {
    body.push(new Uint8Array(1));
    at++;
  }
  const shoff = at;
  const sh = w(64 * names.length);
  names.forEach((_n, i) => {
    const o = i * 64;
    let type = 0;
    let flags = 0;
    let size = contents[i]?.length ?? 0;
    let link = 0;
    let info = 0;
    let entsize = 0;
    if (i === 0) size = 0;
    else if (i <= user.length) {
      const s = user[i - 1] as SectionDef;
      type = s.type ?? 1;
      flags = s.flags ?? (s.code ? 0x6 : 0x2);
      if (type === 8) size = s.size ?? 0;
    } else if (i < symtabIndex) {
      type = def.rela ? 4 : 9;
      link = symtabIndex;
      info = indexOf(relTargets[i - user.length - 1] as string);
      entsize = def.rela ? 24 : 16;
    } else if (i === symtabIndex) {
      type = 2;
      link = strtabIndex;
      info = 1;
      entsize = 24;
    } else type = 3;
    sh.v.setUint32(o, nameOffsets[i] as number, le);
    sh.v.setUint32(o + 4, type, le);
    setU64(sh.v, o + 8, flags);
    setU64(sh.v, o + 24, offsets[i] as number);
    setU64(sh.v, o + 32, size);
    sh.v.setUint32(o + 40, link, le);
    sh.v.setUint32(o + 44, info, le);
    setU64(sh.v, o + 48, 8);
    setU64(sh.v, o + 56, entsize);
  });
  const head = w(64);
  head.b.set([0x7f, 0x45, 0x4c, 0x46, 2, le ? 1 : 2, 1]);
  head.v.setUint16(16, 1, le);
  head.v.setUint16(18, def.machine ?? 247, le);
  head.v.setUint32(20, 1, le);
  setU64(head.v, 40, shoff);
  head.v.setUint16(52, 64, le);
  head.v.setUint16(58, 64, le);
  head.v.setUint16(60, names.length, le);
  head.v.setUint16(62, strtabIndex, le);
  return concat([head.b, ...body, sh.b]);
}
