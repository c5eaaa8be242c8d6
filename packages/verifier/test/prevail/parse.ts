// A small assembler for the PREVAIL verifier's test syntax (`r1 = *(u32 *)(r1 + 8)`,
// `if r1 > r2 goto <label>`, `assume r1 < 10`, `lock *(u64 *)(r1 + 0) += r5 fetch`, `call <sub>`),
// and a reader for the `pre` constraints of its YAML cases. Used only by the conformance harness.

import type { InitialReg, MapDef, RawInsn } from '../../src/index.js';

export class PrevailParseError extends Error {}

interface Item {
  insns: RawInsn[];
  /** Label targets: [insn index within `insns`, label, kind]. */
  fixups: { at: number; label: string; kind: 'jump' | 'call' | 'sink' }[];
  line: string;
  /** Conditional jumps whose edges PREVAIL reports when one can never be taken. */
  checks?: { at: number; edges: number }[];
}

/** Coverage bits of `VerifyResult.coverage`: fall-through and jump edges. */
export const EDGE_FALL = 2;
export const EDGE_JUMP = 4;

const JMP_OPS: Record<string, number> = {
  '==': 0x1,
  '>': 0x2,
  '>=': 0x3,
  '&!=': 0x4,
  '!=': 0x5,
  's>': 0x6,
  's>=': 0x7,
  '<': 0xa,
  '<=': 0xb,
  's<': 0xc,
  's<=': 0xd,
};
const NEGATED: Record<string, string> = {
  '==': '!=',
  '!=': '==',
  '>': '<=',
  '<=': '>',
  '>=': '<',
  '<': '>=',
  's>': 's<=',
  's<=': 's>',
  's>=': 's<',
  's<': 's>=',
  '&==': '&!=',
  '&!=': '&==',
};
const ALU_OPS: Record<string, number> = {
  '+=': 0x0,
  '-=': 0x1,
  '*=': 0x2,
  '/=': 0x3,
  '|=': 0x4,
  '&=': 0x5,
  '<<=': 0x6,
  '>>=': 0x7,
  '%=': 0x9,
  '^=': 0xa,
  's>>=': 0xc,
  's/=': 0x3,
  's%=': 0x9,
};
const SIZES: Record<string, number> = { '8': 0x10, '16': 0x08, '32': 0x00, '64': 0x18 };
const ATOMIC_OPS: Record<string, number> = { '+': 0x00, '|': 0x40, '&': 0x50, '^': 0xa0, x: 0xe1, cx: 0xf1 };

function num(text: string): number {
  const t = text.trim();
  const v = BigInt(t.startsWith('-') ? `-${t.slice(1).trim()}` : t);
  return Number(BigInt.asIntN(32, v));
}

function reg(text: string): { n: number; wide: boolean } | null {
  const m = /^([rw])(\d+)$/.exec(text.trim());
  return m ? { n: Number(m[2]), wide: m[1] === 'r' } : null;
}

const OPERAND = String.raw`(-?\s*(?:0x[0-9a-fA-F]+|\d+)|[rw]\d+)`;
const MEM = String.raw`\*\(([us])(8|16|32|64) \*\)\((r\d+)\s*([+-])\s*(\d+)\)`;

function memOff(sign: string, n: string): number {
  return sign === '-' ? -Number(n) : Number(n);
}

function cond(dst: string, op: string, rhs: string, label: string, kind: 'jump' | 'sink', negate: boolean): Item | null {
  const d = reg(dst);
  if (!d) return null;
  const o = negate ? NEGATED[op] : op;
  if (o === undefined) return null;
  const s = reg(rhs);
  const cls = d.wide ? 0x05 : 0x06;
  const src = s ? { src: s.n, imm: 0, x: 0x08 } : { src: 0, imm: num(rhs), x: 0 };
  if (o === '&==') {
    // no opcode for "no bit in common": jset over an unconditional jump
    return {
      insns: [
        { opcode: 0x40 | src.x | cls, dst: d.n, src: src.src, imm: src.imm, off: 1 },
        { opcode: 0x05 },
      ],
      fixups: [{ at: 1, label, kind }],
      line: '',
      // (a & b) == 0 holds on the fall-through of the jset
      checks: [{ at: 0, edges: kind === 'sink' ? EDGE_JUMP : EDGE_FALL | EDGE_JUMP }],
    };
  }
  const code = JMP_OPS[o];
  if (code === undefined) return null;
  return {
    insns: [{ opcode: (code << 4) | src.x | cls, dst: d.n, src: src.src, imm: src.imm }],
    fixups: [{ at: 0, label, kind }],
    line: '',
    // an assume is the fall-through of its negated jump
    checks: [{ at: 0, edges: kind === 'sink' ? EDGE_FALL : EDGE_FALL | EDGE_JUMP }],
  };
}

/** Parses one line (comment already removed). */
function parseLine(line: string): Item {
  const one = (insn: RawInsn): Item => ({ insns: [insn], fixups: [], line });
  let m: RegExpExecArray | null;
  if (line === 'exit') return one({ opcode: 0x95 });
  if ((m = /^goto\s+<([^>]+)>$/.exec(line))) return { insns: [{ opcode: 0x05 }], fixups: [{ at: 0, label: m[1]!, kind: 'jump' }], line };
  if ((m = /^call\s+<([^>]+)>$/.exec(line))) {
    return { insns: [{ opcode: 0x85, src: 1 }], fixups: [{ at: 0, label: m[1]!, kind: 'call' }], line };
  }
  if ((m = /^call\s+(-?\d+)$/.exec(line))) return one({ opcode: 0x85, imm: Number(m[1]) });
  if ((m = /^callx\s+r(\d+)$/.exec(line))) return one({ opcode: 0x8d, dst: Number(m[1]) });
  if ((m = new RegExp(String.raw`^if\s+([rw]\d+)\s+(s?[<>]=?|==|!=|&==|&!=)\s+${OPERAND}\s+goto\s+<([^>]+)>$`).exec(line))) {
    const it = cond(m[1]!, m[2]!, m[3]!, m[4]!, 'jump', false);
    if (it) return { ...it, line };
  }
  if ((m = new RegExp(String.raw`^assume\s+([rw]\d+)\s+(s?[<>]=?|==|!=|&==|&!=)\s+${OPERAND}$`).exec(line))) {
    const it = cond(m[1]!, m[2]!, m[3]!, '', 'sink', true);
    if (it) return { ...it, line };
  }
  if ((m = new RegExp(String.raw`^lock\s+${MEM}\s+(\+|\||&|\^|x|cx)=\s+r(\d+)(\s+fetch)?$`).exec(line))) {
    const size = m[2] === '64' ? 0x18 : 0x00;
    let imm = ATOMIC_OPS[m[6]!]!;
    if (m[8]) imm |= 1;
    return one({ opcode: 0xc3 | size, dst: Number(m[3]!.slice(1)), src: Number(m[7]), off: memOff(m[4]!, m[5]!), imm });
  }
  if ((m = new RegExp(String.raw`^${MEM}\s*=\s*${OPERAND}$`).exec(line))) {
    const size = SIZES[m[2]!]!;
    const s = reg(m[6]!);
    const dst = Number(m[3]!.slice(1));
    const off = memOff(m[4]!, m[5]!);
    if (s) return one({ opcode: 0x63 | size, dst, src: s.n, off });
    return one({ opcode: 0x62 | size, dst, off, imm: num(m[6]!) });
  }
  if ((m = new RegExp(String.raw`^r(\d+)\s*=\s*${MEM}$`).exec(line))) {
    const size = SIZES[m[3]!]!;
    const sx = m[2] === 's';
    return one({
      opcode: (sx ? 0x81 : 0x61) | size,
      dst: Number(m[1]),
      src: Number(m[4]!.slice(1)),
      off: memOff(m[5]!, m[6]!),
    });
  }
  if ((m = /^r0\s*=\s*\*\(u(8|16|32|64) \*\)skb\[(r\d+|-?\d+)\]$/.exec(line))) {
    const size = SIZES[m[1]!]!;
    const r = reg(m[2]!);
    if (r) return one({ opcode: 0x40 | size, src: r.n });
    return one({ opcode: 0x20 | size, imm: Number(m[2]) });
  }
  if ((m = /^r(\d+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*ll$/.exec(line))) {
    const v = BigInt.asUintN(64, BigInt(m[2]!.startsWith('-') ? `-${m[2]!.slice(1)}` : m[2]!));
    return one2(line, { opcode: 0x18, dst: Number(m[1]), imm: Number(BigInt.asIntN(32, v)) }, Number(BigInt.asIntN(32, v >> 32n)));
  }
  if ((m = /^r(\d+)\s*=\s*map_fd\s+(\d+)$/.exec(line))) return one2(line, { opcode: 0x18, dst: Number(m[1]), src: 1, imm: Number(m[2]) }, 0);
  if ((m = /^r(\d+)\s*=\s*map_by_idx\((\d+)\)$/.exec(line))) return one2(line, { opcode: 0x18, dst: Number(m[1]), src: 5, imm: Number(m[2]) }, 0);
  if ((m = /^r(\d+)\s*=\s*map_val\((\d+)\)\s*\+\s*(\d+)$/.exec(line))) {
    return one2(line, { opcode: 0x18, dst: Number(m[1]), src: 2, imm: Number(m[2]) }, Number(m[3]));
  }
  if ((m = /^r(\d+)\s*=\s*mva\(map_by_idx\((\d+)\)\)\s*\+\s*(\d+)$/.exec(line))) {
    return one2(line, { opcode: 0x18, dst: Number(m[1]), src: 6, imm: Number(m[2]) }, Number(m[3]));
  }
  if ((m = /^([rw]\d+)\s*=\s*-\s*([rw]\d+)$/.exec(line))) {
    const d = reg(m[1]!)!;
    return one({ opcode: 0x80 | (d.wide ? 0x07 : 0x04), dst: d.n });
  }
  if ((m = /^([rw]\d+)\s*=\s*(be|le|swap)(16|32|64)\s+([rw]\d+)$/.exec(line))) {
    const d = reg(m[1]!)!;
    const kind = m[2]!;
    const opcode = kind === 'swap' ? 0xd7 : kind === 'be' ? 0xdc : 0xd4;
    return one({ opcode, dst: d.n, imm: Number(m[3]) });
  }
  if ((m = /^([rw]\d+)\s*s(8|16|32)=\s*([rw]\d+)$/.exec(line))) {
    const d = reg(m[1]!)!;
    const s = reg(m[3]!)!;
    return one({ opcode: 0xbc | (d.wide ? 0x03 : 0x00), dst: d.n, src: s.n, off: Number(m[2]) });
  }
  if ((m = new RegExp(String.raw`^([rw]\d+)\s*(s>>=|s/=|s%=|<<=|>>=|[-+*/%|&^]=|=)\s*${OPERAND}$`).exec(line))) {
    const d = reg(m[1]!)!;
    const op = m[2]!;
    const s = reg(m[3]!);
    const cls = d.wide ? 0x07 : 0x04;
    const code = op === '=' ? 0xb : ALU_OPS[op]!;
    const off = op === 's/=' || op === 's%=' ? 1 : 0;
    if (s) return one({ opcode: (code << 4) | 0x08 | cls, dst: d.n, src: s.n, off });
    return one({ opcode: (code << 4) | cls, dst: d.n, imm: num(m[3]!), off });
  }
  throw new PrevailParseError(`cannot parse line '${line}'`);
}

function one2(line: string, first: RawInsn, hi: number): Item {
  return { insns: [first, { opcode: 0, imm: hi }], fixups: [], line };
}

export interface PrevailProgram {
  insns: RawInsn[];
  /** Indices of the sink instructions `assume` jumps to (paths stop there). */
  stopAt: number[];
  /** Conditional jumps and the edges PREVAIL expects to be possible. */
  checks: { index: number; edges: number }[];
  /**
   * PREVAIL's instruction labels (one per instruction line, an `lddw` counting once, in block
   * order) to the index of the first instruction assembled for the line.
   */
  lineStarts: number[];
  /**
   * The main program's sink when it also stands for PREVAIL's exit (the program runs off its
   * last line, or jumps to a label after it), not only for the end of an `assume`.
   */
  endSink?: number;
}

/** Assembles the `code` of a case (label → block text, in order). */
export function assemblePrevail(code: Record<string, unknown>): PrevailProgram {
  const blocks: { label: string; items: Item[] }[] = [];
  for (const [key, body] of Object.entries(code)) {
    const label = key.replace(/^<|>$/g, '');
    const text = Array.isArray(body) ? body.join('\n') : String(body ?? '');
    const items: Item[] = [];
    for (const raw of text.split('\n')) {
      const line = raw.replace(/;.*$/, '').trim();
      if (line) items.push(parseLine(line));
    }
    blocks.push({ label, items });
  }
  const callTargets = new Set<string>();
  for (const b of blocks) for (const it of b.items) for (const f of it.fixups) if (f.kind === 'call') callTargets.add(f.label);
  // group blocks into subprograms: a called label starts one
  const subprogs: { label: string; items: Item[] }[][] = [];
  for (const b of blocks) {
    if (subprogs.length === 0 || callTargets.has(b.label)) subprogs.push([]);
    subprogs[subprogs.length - 1]!.push(b);
  }
  const insns: RawInsn[] = [];
  const labels = new Map<string, number>();
  const pending: { index: number; label: string; kind: 'jump' | 'call' | 'sink'; sub: number }[] = [];
  const sinks: number[] = [];
  const stopAt: number[] = [];
  const checks: { index: number; edges: number }[] = [];
  const lineStart = new Map<Item, number>();
  let endSink: number | undefined;
  subprogs.forEach((sub, k) => {
    let needsSink = false;
    let last: Item | undefined;
    for (const b of sub) {
      labels.set(b.label, insns.length);
      for (const it of b.items) {
        for (const f of it.fixups) {
          pending.push({ index: insns.length + f.at, label: f.label, kind: f.kind, sub: k });
          if (f.kind === 'sink') needsSink = true;
        }
        for (const c of it.checks ?? []) checks.push({ index: insns.length + c.at, edges: c.edges });
        lineStart.set(it, insns.length);
        insns.push(...it.insns.map((x) => ({ ...x })));
        last = it;
      }
    }
    const lastOp = last?.insns[last.insns.length - 1]?.opcode;
    const fallsOff = lastOp !== 0x95 && lastOp !== 0x05;
    if (fallsOff) needsSink = true;
    if (k === 0 && fallsOff) endSink = insns.length;
    if (needsSink) {
      sinks[k] = insns.length;
      stopAt.push(insns.length);
      insns.push({ opcode: 0x95 });
    }
  });
  for (const f of pending) {
    const target = f.kind === 'sink' ? sinks[f.sub]! : labels.get(f.label);
    if (target === undefined) throw new PrevailParseError(`unknown label <${f.label}>`);
    const insn = insns[f.index]!;
    // a jump to a label after the main program's last line also leaves it for PREVAIL's exit
    if (f.kind === 'jump' && f.sub === 0 && target === sinks[0]) endSink = target;
    if (f.kind === 'call') insn.imm = target - f.index - 1;
    else insn.off = target - f.index - 1;
  }
  // a jump to the next instruction goes the same way on both edges: nothing to report
  const sameWay = (c: { index: number; edges: number }) => c.edges === (EDGE_FALL | EDGE_JUMP) && insns[c.index]!.off === 0;
  // PREVAIL numbers the lines in the order the blocks are written (subprograms keep that order)
  const lineStarts = blocks.flatMap((b) => b.items.map((it) => lineStart.get(it)!));
  return { insns, stopAt, checks: checks.filter((c) => !sameWay(c)), lineStarts, endSink };
}

/** The initial state a case's `pre` constraints describe. */
export interface PrevailPre {
  regs: Record<number, InitialReg>;
  stackBytes: number[];
  maps: Map<number, MapDef>;
  /**
   * PREVAIL's offset of r10 in its stack region (`r10.stack_offset`, 512 unless the case says
   * otherwise): its stack offsets are counted from the region's start, ours from r10.
   */
  stackBase: number;
  /** Whether the case constrains r10 (otherwise PREVAIL knows nothing about it). */
  r10Given: boolean;
  /** Constraints the harness cannot express (packets, relations between registers). */
  unsupported: string[];
}

function range(v: string): [bigint, bigint] | null {
  const t = v.trim();
  let m: RegExpExecArray | null;
  if ((m = /^\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]$/.exec(t))) return [BigInt(m[1]!), BigInt(m[2]!)];
  if (/^-?\d+$/.test(t)) return [BigInt(t), BigInt(t)];
  return null;
}

const KNOWN_TYPES = new Set(['number', 'ctx', 'stack', 'shared', 'packet', 'map_fd', 'map_fd_programs']);

/**
 * The map every PREVAIL YAML case sees (fd 1, index 0): 4-byte keys and values. PREVAIL's test
 * platform (`src/test/ebpf_yaml.cpp`) answers every map fd with this one descriptor, of type 0
 * (BPF_MAP_TYPE_UNSPEC), and checks no map type against the helpers; Linux has no untyped map,
 * so the harness uses an array of that shape.
 */
export const PREVAIL_MAP: MapDef = { type: 2, keySize: 4, valueSize: 4, maxEntries: 4 };

/**
 * The initial states a case's `pre` describes: one per combination of the types a register may
 * have (`r1.type in {ctx, stack}`); the program must be safe in each.
 */
export function parsePreVariants(pre: readonly string[]): PrevailPre[] {
  const choices: { index: number; types: string[] }[] = [];
  // `r2.type=r3.type`: only the combinations where both registers have the same type
  const sameType: [number, number][] = [];
  const rest: string[] = [];
  for (const c of pre) {
    const eq = /^r(\d+)\.type=r(\d+)\.type$/.exec(c);
    if (eq) sameType.push([Number(eq[1]), Number(eq[2])]);
    else rest.push(c);
  }
  rest.forEach((c, index) => {
    const m = /^r(\d+)\.type in \{([^}]*)\}$/.exec(c);
    if (m) choices.push({ index, types: m[2]!.split(',').map((t) => t.trim()) });
  });
  let variants: string[][] = [rest];
  for (const ch of choices) {
    const reg = /^r(\d+)/.exec(rest[ch.index]!)![1];
    variants = variants.flatMap((v) =>
      ch.types.map((t) => {
        const copy = v.slice();
        copy[ch.index] = `r${reg}.type=${t}`;
        return copy;
      }),
    );
  }
  if (sameType.length === 0) return variants.map(parsePre);
  const typeOf = (v: readonly string[], r: number) => {
    for (const c of v) {
      const m = /^r(\d+)\.type=(\w+)$/.exec(c);
      if (m && Number(m[1]) === r) return m[2]!;
    }
    return undefined;
  };
  const out: PrevailPre[] = [];
  for (const v of variants) {
    const unknown: string[] = [];
    let keep = true;
    for (const [a, b] of sameType) {
      const ta = typeOf(v, a);
      const tb = typeOf(v, b);
      if (ta === undefined || tb === undefined) unknown.push(`r${a}.type=r${b}.type`);
      else if (ta !== tb) keep = false;
    }
    if (!keep) continue;
    const parsed = parsePre(v);
    parsed.unsupported.push(...unknown);
    out.push(parsed);
  }
  return out;
}

export function parsePre(pre: readonly string[]): PrevailPre {
  const fields = new Map<number, Map<string, string>>();
  const stackBytes: number[] = [];
  const numericBytes: number[] = [];
  const unsupported: string[] = [];
  // the packet's size: the kernel's range is what is known to be there, the lower bound
  let packetSize = 0;
  for (const c of pre) {
    let m: RegExpExecArray | null;
    if ((m = /^packet_size=(.*)$/.exec(c))) {
      const r = range(m[1]!);
      if (r) packetSize = Math.max(0, Number(r[0]));
      else unsupported.push(c);
      continue;
    }
    if (c === 'meta_offset=0') continue; // no metadata before the packet: nothing to express
    if ((m = /^meta_offset=/.exec(c))) {
      unsupported.push(c); // PREVAIL's reads before `data`; Linux reads metadata only through data_meta
      continue;
    }
    if ((m = /^r(\d+)\.(\w+)=(.*)$/.exec(c))) {
      const r = Number(m[1]);
      if (!fields.has(r)) fields.set(r, new Map());
      fields.get(r)!.set(m[2]!, m[3]!.trim());
      continue;
    }
    if ((m = /^s\[(\d+)\.\.\.(\d+)\]\.type=number$/.exec(c))) {
      for (let b = Number(m[1]); b <= Number(m[2]); b++) numericBytes.push(b);
      continue;
    }
    unsupported.push(c);
  }
  // PREVAIL counts stack offsets from the start of its stack region, r10 being at its
  // `stack_offset` (512 for a single frame); the verifier counts them from r10
  const r10 = fields.get(10);
  let stackBase = 512;
  if (r10) {
    const t = r10.get('type');
    if (t !== undefined && t !== 'stack') unsupported.push(`r10.type=${t}`);
    const so = r10.get('stack_offset');
    const sr = so === undefined ? null : range(so);
    if (so !== undefined && (!sr || sr[0] !== sr[1])) unsupported.push(`r10.stack_offset=${so}`);
    else if (sr) stackBase = Number(sr[0]);
  }
  for (const b of numericBytes) stackBytes.push(b - stackBase);
  const regs: Record<number, InitialReg> = { 1: { type: 'not_init' } };
  const maps = new Map<number, MapDef>([
    [0, PREVAIL_MAP],
    [1, PREVAIL_MAP],
  ]);
  let shared = 1000;
  for (const [r, f] of fields) {
    if (r === 10) continue;
    // the fields read for the register's type; any other is reported as not expressed
    const used = new Set(['type']);
    const get = (k: string) => {
      used.add(k);
      return f.get(k);
    };
    const type = f.get('type');
    const int = (k: string) => {
      const v = get(k);
      const rr = v === undefined ? null : range(v);
      if (v !== undefined && (!rr || rr[0] !== rr[1])) unsupported.push(`r${r}.${k}=${v}`);
      return rr ? Number(rr[0]) : 0;
    };
    switch (type) {
      case 'number': {
        const s = get('svalue');
        const u = get('uvalue');
        const sr = s === undefined ? null : range(s);
        const ur = u === undefined ? null : range(u);
        if (s !== undefined && !sr) unsupported.push(`r${r}.svalue=${s}`);
        if (u !== undefined && !ur) unsupported.push(`r${r}.uvalue=${u}`);
        const init: InitialReg = { type: 'scalar' };
        if (sr) Object.assign(init, { smin: sr[0], smax: sr[1] });
        if (ur) Object.assign(init, { umin: BigInt.asUintN(64, ur[0]), umax: BigInt.asUintN(64, ur[1]) });
        regs[r] = init;
        break;
      }
      case 'ctx':
        regs[r] = { type: 'ctx', offset: int('ctx_offset') };
        break;
      case 'stack':
        regs[r] = { type: 'stack', offset: int('stack_offset') - stackBase };
        break;
      case 'shared': {
        const size = int('shared_region_size');
        const index = shared++;
        maps.set(index, { type: 2, keySize: 4, valueSize: size, maxEntries: 1 });
        // the value of a shared pointer is its address: a range that includes 0 means maybe null
        const sv = get('svalue') ?? get('uvalue');
        const maybeNull = sv !== undefined && range(sv)?.[0] === 0n;
        regs[r] = { type: 'map_value', map: index, offset: int('shared_offset'), maybeNull };
        break;
      }
      case 'packet': {
        const po = get('packet_offset') ?? '0';
        if (po === 'packet_size') {
          regs[r] = { type: 'packet_end' };
          break;
        }
        const pr = range(po);
        if (!pr) {
          unsupported.push(`r${r}.packet_offset=${po}`);
          regs[r] = { type: 'packet', range: 0, varMin: -(1n << 31n), varMax: 1n << 31n };
        } else if (pr[0] === pr[1]) {
          regs[r] = { type: 'packet', offset: Number(pr[0]), range: packetSize };
        } else {
          regs[r] = { type: 'packet', range: 0, varMin: pr[0], varMax: pr[1] };
        }
        break;
      }
      case 'map_fd':
      case 'map_fd_programs': {
        const fd = int('map_fd');
        if (type === 'map_fd_programs') maps.set(fd, { type: 3, keySize: 4, valueSize: 4, maxEntries: 4 });
        else if (!maps.has(fd)) maps.set(fd, PREVAIL_MAP);
        regs[r] = { type: 'map_ptr', map: fd };
        break;
      }
      default:
        unsupported.push(`r${r}.type=${type}`);
    }
    for (const [k, v] of f) if (!used.has(k) && KNOWN_TYPES.has(type ?? '')) unsupported.push(`r${r}.${k}=${v}`);
  }
  return { regs, stackBytes, maps, stackBase, r10Given: r10 !== undefined, unsupported };
}
