import { DEFAULT_TIME_FORMAT, type ScriptAction, type ScriptPrintfArg, type SpecFieldRelocation } from '@probeyard/compat';
import type { FormatField } from '@probeyard/formats';
import { type BinaryOp, type Expr, intTypeNames, type MapExpr, type Stmt } from './ast.js';
import { type Checker, constantOf, type FieldRef } from './check.js';
import { type ByteSize, Emitter, type JmpName, type Label, type Reg } from './emitter.js';
import { fail, type SourceSpan } from './errors.js';
import type { MapLayout } from './map-layout.js';
import type { ScriptType } from './script-types.js';

/** Helper ids (`enum bpf_func_id`). */
const H = {
  mapLookup: 1,
  mapUpdate: 2,
  mapDelete: 3,
  ktimeGetNs: 5,
  prandomU32: 7,
  smpProcessorId: 8,
  currentPidTgid: 14,
  currentUidGid: 15,
  currentComm: 16,
  currentTask: 35,
  currentCgroupId: 80,
  probeReadKernelStr: 115,
  jiffies64: 118,
  ringbufOutput: 130,
} as const;

const CTX: Reg = 6;
const FP: Reg = 10;
/** Callee-saved registers that hold intermediate integers across helper calls. */
const POOL: Reg[] = [7, 8, 9];
const MAX_STACK = 512;

/** An integer being computed: a constant, a register, or a stack slot. `owned`: a temporary to release. */
type IntV = { k: 'const'; v: bigint } | TempV;
type TempV = { k: 'reg'; r: Reg; owned: boolean } | { k: 'slot'; off: number; owned: boolean };

const fitsImm = (v: bigint) => v >= -(1n << 31n) && v < 1n << 31n;

/** What the program generator needs from the whole script. */
export interface GenShared {
  maps: ReadonlyMap<string, MapLayout>;
  /** Index of the output ring buffer; -1 when no program emits actions. */
  outputMap: number;
  /** Index of the start-time map of `elapsed`; -1 when unused. */
  startMap: number;
  /** Adds an action; returns its index (the record's first word). */
  action(a: ScriptAction): number;
}

/** The 64-bit C value of a string literal's bytes, little-endian, for one 8-byte chunk. */
function chunkValue(bytes: Uint8Array, at: number, n: number): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[at + i] ?? 0);
  return v;
}

const encoder = new TextEncoder();

const mirror: Record<string, BinaryOp> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };

function jumpOf(op: BinaryOp, signed: boolean, negate: boolean): JmpName {
  const o = negate ? ({ '==': '!=', '!=': '==', '<': '>=', '<=': '>', '>': '<=', '>=': '<' } as Record<string, BinaryOp>)[op]! : op;
  switch (o) {
    case '==':
      return 'jeq';
    case '!=':
      return 'jne';
    case '<':
      return signed ? 'jslt' : 'jlt';
    case '<=':
      return signed ? 'jsle' : 'jle';
    case '>':
      return signed ? 'jsgt' : 'jgt';
    default:
      return signed ? 'jsge' : 'jge';
  }
}

const aluOf: Partial<Record<BinaryOp, 'add' | 'sub' | 'mul' | 'div' | 'mod' | 'and' | 'or' | 'xor' | 'lsh' | 'rsh'>> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '/': 'div',
  '%': 'mod',
  '&': 'and',
  '|': 'or',
  '^': 'xor',
  '<<': 'lsh',
  '>>': 'rsh',
};
const commutative = new Set<BinaryOp>(['+', '*', '&', '|', '^']);

/**
 * Generates one program: a probe for one attach point. Integers live in r7–r9 (callee-saved, so
 * they survive helper calls) or, past three, in stack slots; r6 holds the context; r0–r5 are
 * scratch within one operation. Strings are built in place (keys, records, variables) in the
 * 512-byte frame. Every `args.FIELD` read is a load or an address from r6 with a field relocation.
 */
export class ProgramGen {
  readonly em = new Emitter();
  readonly relocations: SpecFieldRelocation[] = [];
  private readonly free: Reg[] = [...POOL];
  /** Lowest stack offset in use (negative, from r10). */
  private top = 0;
  private readonly varSlots = new Map<string, number>();
  private readonly exitLabel: Label;
  private spanNow: SourceSpan;
  /** Enclosing while loops, innermost last: where break and continue jump. */
  private readonly loops: { breakTo: Label; continueTo: Label }[] = [];
  /** Each while loop's instructions as handles (its condition to its jump back), for naming a loop the verifier refuses. */
  private readonly loopHandles: { span: SourceSpan; first: number; last: number }[] = [];
  /** Each while loop's instructions as slots of the encoded program (after {@link generate}). */
  readonly loopSlots: { span: SourceSpan; first: number; last: number }[] = [];

  constructor(
    readonly checker: Checker,
    readonly shared: GenShared,
    private readonly usesCtx: boolean,
    /** Code run first (BEGIN's start-time store for `elapsed`). */
    private readonly prologue?: (g: ProgramGen) => void,
  ) {
    this.exitLabel = this.em.label();
    this.spanNow = checker.unit.probe.span;
  }

  /** The whole program's bytes. */
  generate(): Uint8Array {
    const unit = this.checker.unit;
    if (this.usesCtx) this.em.mov(CTX, 1);
    for (const [name, t] of unit.vars) this.varSlots.set(name, this.alloc(t.kind === 'string' ? t.size : 8, unit.probe.span));
    this.prologue?.(this);
    if (unit.probe.predicate !== undefined) {
      const mark = this.top;
      this.spanNow = unit.probe.predicate.span;
      this.branch(unit.probe.predicate, this.exitLabel, false);
      this.top = mark;
    }
    this.stmts(unit.probe.body);
    this.em.place(this.exitLabel);
    this.em.aluImm('mov', 0, 0);
    this.em.exit();
    const { bytes, slotOf } = this.em.encode(unit.probe.span);
    for (const l of this.loopHandles) {
      const first = slotOf(l.first);
      const last = slotOf(l.last);
      if (first !== undefined && last !== undefined) this.loopSlots.push({ span: l.span, first, last });
    }
    // relocations name slots; instructions no path reaches were dropped, with their relocations
    const kept: SpecFieldRelocation[] = [];
    for (const r of this.relocations) {
      const slot = slotOf(r.insnIndex);
      if (slot !== undefined) kept.push({ ...r, insnIndex: slot });
    }
    this.relocations.splice(0, this.relocations.length, ...kept);
    return bytes;
  }

  // ---- resources ----------------------------------------------------------------------------

  /** `size` bytes of stack (8-aligned); returns the offset from r10. */
  alloc(size: number, span: SourceSpan = this.spanNow): number {
    const n = (size + 7) & ~7;
    this.top -= n;
    if (-this.top > MAX_STACK) {
      fail('limit', span, `stack: this needs ${-this.top} bytes of the 512-byte BPF stack`, 'use fewer or shorter strings (str(x, n)) in one statement, or fewer variables');
    }
    return this.top;
  }

  private temp(): TempV {
    const r = this.free.shift();
    if (r !== undefined) return { k: 'reg', r, owned: true };
    return { k: 'slot', off: this.alloc(8), owned: true };
  }

  private release(v: IntV): void {
    if (v.k === 'reg' && v.owned) this.free.unshift(v.r);
  }

  /** A register holding `v`: its own register, else `scratch` loaded with it. */
  private load(v: IntV, scratch: Reg): Reg {
    if (v.k === 'reg') return v.r;
    if (v.k === 'const') this.em.movConst(scratch, v.v);
    else this.em.ldx(8, scratch, FP, v.off);
    return scratch;
  }

  /** Moves `v` into register `dst`. */
  private loadInto(v: IntV, dst: Reg): void {
    if (v.k === 'reg') {
      if (v.r !== dst) this.em.mov(dst, v.r);
    } else this.load(v, dst);
  }

  /** Stores `v` as 8 bytes at r10 + off. */
  private storeInt(v: IntV, off: number): void {
    if (v.k === 'const' && fitsImm(v.v)) this.em.st(8, FP, off, Number(v.v));
    else this.em.stx(8, FP, off, this.load(v, 1));
  }

  /** A temporary holding register `src` (r0 after a call). */
  private capture(src: Reg): TempV {
    const t = this.temp();
    if (t.k === 'reg') this.em.mov(t.r, src);
    else this.em.stx(8, FP, t.off, src);
    return t;
  }

  private fpAddr(reg: Reg, off: number): void {
    this.em.mov(reg, FP);
    this.em.aluImm('add', reg, off);
  }

  private type(e: Expr): ScriptType {
    return this.checker.typeOf(e);
  }

  // ---- statements ---------------------------------------------------------------------------

  private stmts(list: readonly Stmt[]): void {
    for (const s of list) {
      const mark = this.top;
      this.spanNow = s.span;
      this.stmt(s);
      this.top = mark;
      if (this.free.length !== POOL.length) throw new Error(`codegen: registers leaked after the statement at ${s.span.start}`);
    }
  }

  private stmt(s: Stmt): void {
    switch (s.kind) {
      case 'expr':
        if (s.expr.kind === 'call') this.call(s.expr);
        else this.discard(s.expr);
        return;
      case 'map-assign':
        this.mapAssign(s);
        return;
      case 'var-assign':
        this.varAssign(s.name, s.op, s.value);
        return;
      case 'incdec':
        if (s.target.kind === 'var') this.varAssign(s.target.name, '+=', { kind: 'int', value: BigInt(s.delta), span: s.span }, s.delta);
        else this.mapUpdateOp(s.target, '+', { k: 'const', v: BigInt(s.delta) });
        return;
      case 'if': {
        const otherwise = this.em.label();
        this.branch(s.cond, otherwise, false);
        this.stmts(s.then);
        if (s.else === undefined) {
          this.em.place(otherwise);
          return;
        }
        const end = this.em.label();
        this.em.ja(end);
        this.em.place(otherwise);
        this.stmts(s.else);
        this.em.place(end);
        return;
      }
      case 'block':
        this.stmts(s.body);
        return;
      case 'return':
        this.em.ja(this.exitLabel);
        return;
      case 'while': {
        // top: if !cond goto end; body; goto top; end:  (continue jumps to top, break to end)
        const top = this.em.label();
        const end = this.em.label();
        this.em.place(top);
        const first = this.em.here();
        this.branch(s.cond, end, false);
        this.loops.push({ breakTo: end, continueTo: top });
        this.stmts(s.body);
        this.loops.pop();
        const last = this.em.ja(top);
        this.em.place(end);
        this.loopHandles.push({ span: s.span, first, last });
        return;
      }
      case 'unroll':
        for (let i = 0; i < s.count; i++) this.stmts(s.body);
        return;
      case 'break':
      case 'continue': {
        const loop = this.loops[this.loops.length - 1];
        if (loop === undefined) fail('syntax', s.span, `syntax: ${s.kind} used outside of a loop`);
        this.em.ja(s.kind === 'break' ? loop.breakTo : loop.continueTo);
        return;
      }
    }
  }

  /** An expression statement without effect still runs (its map reads, its calls). */
  private discard(e: Expr): void {
    const t = this.type(e);
    if (t.kind === 'int') this.release(this.int(e));
    else if (t.kind === 'string') this.stringInto(e, this.alloc(t.size), t.size);
  }

  private varAssign(name: string, op: string, value: Expr, delta?: number): void {
    const slot = this.varSlots.get(name);
    const t = this.checker.unit.vars.get(name);
    if (slot === undefined || t === undefined) throw new Error(`codegen: no slot for $${name}`);
    if (t.kind === 'string') {
      this.stringInto(value, slot, t.size);
      return;
    }
    if (op === '=') {
      const v = this.int(value);
      this.storeInt(v, slot);
      this.release(v);
      return;
    }
    const v = delta !== undefined ? ({ k: 'const', v: BigInt(delta) } as IntV) : this.int(value);
    this.em.ldx(8, 1, FP, slot);
    this.applyOp(op.slice(0, -1) as BinaryOp, 1, v, value.span);
    this.em.stx(8, FP, slot, 1);
    this.release(v);
  }

  /** `reg op= v` for an assignment operator's binary operation. */
  private applyOp(op: BinaryOp, reg: Reg, v: IntV, span: SourceSpan): void {
    const alu = aluOf[op];
    if (alu === undefined) throw new Error(`codegen: no ALU op for ${op}`);
    if (v.k === 'const') {
      if ((op === '/' || op === '%') && v.v === 0n) fail('type', span, `${op}: division by zero`);
      const imm = op === '<<' || op === '>>' ? v.v & 63n : BigInt.asIntN(64, v.v);
      if (fitsImm(imm)) {
        this.em.aluImm(alu, reg, Number(imm));
        return;
      }
    }
    this.em.alu(alu, reg, this.load(v, reg === 2 ? 3 : 2));
  }

  // ---- maps ---------------------------------------------------------------------------------

  private layout(m: MapExpr): MapLayout {
    const l = this.shared.maps.get(m.name);
    if (l === undefined) throw new Error(`codegen: no layout for @${m.name}`);
    return l;
  }

  /** Builds a map's key in a new stack buffer; returns its offset. The slot, if any, is left for the caller. */
  private key(m: MapExpr, l: MapLayout): number {
    const off = this.alloc(l.keySize);
    if (l.keyFields.length === 0 && l.slotOffset === undefined) {
      this.em.st(8, FP, off, 0);
      return off;
    }
    l.keyFields.forEach((f, i) => {
      const e = m.keys[i]!;
      if (f.type.kind === 'int') {
        const v = this.int(e);
        this.storeInt(v, off + f.byteOffset);
        this.release(v);
      } else {
        this.stringInto(e, off + f.byteOffset, f.size);
      }
    });
    return off;
  }

  /** `r0 = bpf_map_lookup_elem(map, r10 + keyOff)` */
  private lookup(l: MapLayout, keyOff: number): void {
    this.em.loadMap(1, l.index);
    this.fpAddr(2, keyOff);
    this.em.call(H.mapLookup);
  }

  /** `bpf_map_update_elem(map, key, value, BPF_ANY)` */
  private update(l: MapLayout, keyOff: number, valueOff: number): void {
    this.em.loadMap(1, l.index);
    this.fpAddr(2, keyOff);
    this.fpAddr(3, valueOff);
    this.em.aluImm('mov', 4, 0);
    this.em.call(H.mapUpdate);
  }

  private mapAssign(s: Extract<Stmt, { kind: 'map-assign' }>): void {
    const l = this.layout(s.map);
    const v = s.value;
    if (v.kind === 'call' && (l.value.kind !== 'int' && l.value.kind !== 'string')) {
      this.aggregate(s.map, l, v);
      return;
    }
    if (s.op !== '=') {
      const x = this.int(v);
      this.mapUpdateOp(s.map, s.op.slice(0, -1) as BinaryOp, x);
      this.release(x);
      return;
    }
    const valueOff = this.alloc(l.valueSize);
    if (l.value.kind === 'string') {
      this.stringInto(v, valueOff, l.valueSize);
    } else {
      const x = this.int(v);
      this.storeInt(x, valueOff);
      this.release(x);
    }
    const keyOff = this.key(s.map, l);
    this.update(l, keyOff, valueOff);
  }

  /** `@m[k] op= x` (and `++`, `--`): read-modify-write; a missing entry counts as 0. */
  private mapUpdateOp(m: MapExpr, op: BinaryOp, x: IntV): void {
    const l = this.layout(m);
    const xv = x;
    const keyOff = this.key(m, l);
    this.lookup(l, keyOff);
    const missing = this.em.label();
    const done = this.em.label();
    this.em.jmpImm('jeq', 0, 0, missing);
    if (op === '+' || op === '-') {
      let r: Reg;
      if (op === '-' && xv.k === 'const') {
        this.em.movConst(1, -xv.v);
        r = 1;
      } else {
        r = this.load(xv, 1);
        if (op === '-') {
          if (r !== 1) this.em.mov(1, r);
          this.em.neg(1);
          r = 1;
        }
      }
      this.em.atomicAdd(0, 0, r);
    } else {
      this.em.ldx(8, 1, 0, 0);
      this.applyOp(op, 1, xv, m.span);
      this.em.stx(8, 0, 0, 1);
    }
    this.em.ja(done);
    this.em.place(missing);
    const valueOff = this.alloc(8);
    this.em.aluImm('mov', 1, 0);
    this.applyOp(op, 1, xv, m.span);
    this.em.stx(8, FP, valueOff, 1);
    this.update(l, keyOff, valueOff);
    this.em.place(done);
  }

  private aggregate(m: MapExpr, l: MapLayout, c: Extract<Expr, { kind: 'call' }>): void {
    const value = l.value;
    // the value first: it survives the lookup in r7–r9 or the stack
    const x = value.kind === 'count' ? undefined : this.int(c.args[0]!);
    const keyOff = this.key(m, l);
    if (value.kind === 'hist') this.log2Slot(x!, keyOff + l.slotOffset!, this.type(c.args[0]!));
    if (value.kind === 'lhist') this.linearSlot(x!, keyOff + l.slotOffset!, value.min, value.max, value.step);
    this.lookup(l, keyOff);
    const missing = this.em.label();
    const done = this.em.label();
    this.em.jmpImm('jeq', 0, 0, missing);
    const valueOff = this.alloc(l.valueSize);
    switch (value.kind) {
      case 'count':
      case 'hist':
      case 'lhist':
        this.em.aluImm('mov', 1, 1);
        this.em.atomicAdd(0, 0, 1);
        this.em.ja(done);
        this.em.place(missing);
        this.em.st(8, FP, valueOff, 1);
        break;
      case 'sum':
        this.em.atomicAdd(0, 0, this.load(x!, 1));
        this.em.ja(done);
        this.em.place(missing);
        this.storeInt(x!, valueOff);
        break;
      case 'min':
      case 'max': {
        this.em.ldx(8, 1, 0, 0);
        const rx = this.load(x!, 2);
        // keep the stored value when it is already at least as small (min) / large (max)
        this.em.jmp(value.kind === 'min' ? (value.signed ? 'jsge' : 'jge') : value.signed ? 'jsle' : 'jle', rx, 1, done);
        this.em.stx(8, 0, 0, rx);
        this.em.ja(done);
        this.em.place(missing);
        this.storeInt(x!, valueOff);
        break;
      }
      case 'avg':
      case 'stats':
        this.em.aluImm('mov', 1, 1);
        this.em.atomicAdd(0, 0, 1);
        this.em.atomicAdd(0, 8, this.load(x!, 1));
        this.em.ja(done);
        this.em.place(missing);
        this.em.st(8, FP, valueOff, 1);
        this.storeInt(x!, valueOff + 8);
        break;
      default:
        throw new Error(`codegen: ${value.kind} is not an aggregation`);
    }
    this.update(l, keyOff, valueOff);
    this.em.place(done);
    if (x !== undefined) this.release(x);
  }

  /**
   * bpftrace's log2 bucket: 0 for negative values, 1 for 0, 2 + floor(log2(v)) otherwise. The
   * power of two is found without branches (each step adds k when v >> k is not zero), so the
   * verifier sees one path through it instead of 2^6.
   */
  private log2Slot(x: IntV, slotOff: number, t: ScriptType): void {
    const store = this.em.label();
    this.loadInto(x, 1);
    this.em.aluImm('mov', 2, 0);
    if (t.kind === 'int' && t.signed) this.em.jmpImm('jslt', 1, 0, store);
    this.em.aluImm('mov', 2, 1);
    this.em.jmpImm('jeq', 1, 0, store);
    this.em.aluImm('mov', 2, 2);
    // r5 = 0xffffffff: (h + r5) >> 32 is 1 exactly when 0 < h < 2^32
    this.em.alu32Imm('mov', 5, -1);
    for (const [k, log2k] of [
      [32, 5],
      [16, 4],
      [8, 3],
      [4, 2],
      [2, 1],
    ] as const) {
      // here v < 2^(2k), so h = v >> k < 2^k <= 2^32
      this.em.mov(3, 1);
      this.em.aluImm('rsh', 3, k);
      this.em.alu('add', 3, 5);
      this.em.aluImm('rsh', 3, 32);
      this.em.aluImm('lsh', 3, log2k);
      this.em.alu('rsh', 1, 3);
      this.em.alu('add', 2, 3);
    }
    // v is 1, 2 or 3 now
    this.em.aluImm('rsh', 1, 1);
    this.em.alu('add', 2, 1);
    this.em.place(store);
    this.em.stx(8, FP, slotOff, 2);
  }

  /** bpftrace's lhist bucket: 0 below min, 1 + (v - min) / step up to max, 1 + (max - min) / step above. */
  private linearSlot(x: IntV, slotOff: number, min: number, max: number, step: number): void {
    const store = this.em.label();
    this.loadInto(x, 1);
    this.em.aluImm('mov', 2, 0);
    this.cmpConst('jslt', 1, BigInt(min), store);
    this.em.movConst(2, BigInt(Math.floor((max - min) / step) + 1));
    this.cmpConst('jsgt', 1, BigInt(max), store);
    if (min !== 0) {
      this.em.movConst(3, BigInt(min));
      this.em.alu('sub', 1, 3);
    }
    if (step !== 1) {
      if (fitsImm(BigInt(step))) this.em.aluImm('div', 1, step);
      else {
        this.em.movConst(3, BigInt(step));
        this.em.alu('div', 1, 3);
      }
    }
    this.em.aluImm('add', 1, 1);
    this.em.mov(2, 1);
    this.em.place(store);
    this.em.stx(8, FP, slotOff, 2);
  }

  /** `if reg op const goto label`, through r3 when the constant does not fit an immediate. */
  private cmpConst(op: JmpName, reg: Reg, v: bigint, label: Label): void {
    if (fitsImm(v)) this.em.jmpImm(op, reg, Number(v), label);
    else {
      this.em.movConst(3, v);
      this.em.jmp(op, reg, 3, label);
    }
  }

  // ---- calls as statements ------------------------------------------------------------------

  /** Emits an action record: the action's index, then `fill` writes the rest of `size` bytes. */
  private emitRecord(actionIndex: number, size: number, fill?: (off: number) => void): void {
    const off = this.alloc(size);
    this.em.st(8, FP, off, actionIndex);
    fill?.(off);
    this.em.loadMap(1, this.shared.outputMap);
    this.fpAddr(2, off);
    this.em.aluImm('mov', 3, size);
    this.em.aluImm('mov', 4, 0);
    this.em.call(H.ringbufOutput);
  }

  private printfRecord(format: string, args: Expr[]): void {
    const layout: ScriptPrintfArg[] = [];
    let at = 8;
    for (const a of args) {
      const t = this.type(a);
      const size = t.kind === 'string' ? t.size : 8;
      layout.push({ byteOffset: at, type: t.kind === 'string' ? { kind: 'string', size } : { kind: 'int', size: 8, signed: t.kind === 'int' && t.signed } });
      at += size;
    }
    const id = this.shared.action({ kind: 'printf', format, args: layout });
    this.emitRecord(id, at, (off) => {
      args.forEach((a, i) => {
        const arg = layout[i]!;
        if (arg.type.kind === 'string') this.stringInto(a, off + arg.byteOffset, arg.type.size);
        else {
          const v = this.int(a);
          this.storeInt(v, off + arg.byteOffset);
          this.release(v);
        }
      });
    });
  }

  private call(c: Extract<Expr, { kind: 'call' }>): void {
    switch (c.name) {
      case 'printf':
        this.printfRecord((c.args[0] as { value: string }).value, c.args.slice(1));
        return;
      case 'print': {
        const first = c.args[0]!;
        if (first.kind === 'map' && first.keys.length === 0) {
          const l = this.layout(first);
          const top = c.args[1] === undefined ? 0 : Number(constantOf(c.args[1]) ?? 0n);
          const div = c.args[2] === undefined ? 0 : Number(constantOf(c.args[2]) ?? 0n);
          this.emitRecord(this.shared.action({ kind: 'print', map: l.index, top, div }), 8);
          return;
        }
        const t = this.type(first);
        this.printfRecord(t.kind === 'string' ? '%s\n' : t.kind === 'int' && t.signed ? '%ld\n' : '%lu\n', [first]);
        return;
      }
      case 'clear':
      case 'zero': {
        const l = this.layout(c.args[0] as MapExpr);
        this.emitRecord(this.shared.action({ kind: c.name, map: l.index }), 8);
        return;
      }
      case 'delete': {
        const m = c.args[0] as MapExpr;
        const l = this.layout(m);
        const keyOff = this.key(m, l);
        this.em.loadMap(1, l.index);
        this.fpAddr(2, keyOff);
        this.em.call(H.mapDelete);
        return;
      }
      case 'time': {
        const fmt = c.args[0];
        this.emitRecord(this.shared.action({ kind: 'time', format: fmt?.kind === 'string' ? fmt.value : DEFAULT_TIME_FORMAT }), 8);
        return;
      }
      case 'exit':
        this.emitRecord(this.shared.action({ kind: 'exit' }), 8);
        this.em.ja(this.exitLabel);
        return;
      default:
        this.discard(c);
    }
  }

  // ---- integers -----------------------------------------------------------------------------

  /** Evaluates an integer expression. */
  int(e: Expr): IntV {
    const c = constantOf(e);
    if (c !== undefined) return { k: 'const', v: c };
    switch (e.kind) {
      case 'ident':
        return this.builtin(e.name, e.span);
      case 'field':
        return this.fieldInt(e);
      case 'index':
        return this.elementInt(e);
      case 'var': {
        const slot = this.varSlots.get(e.name);
        if (slot === undefined) throw new Error(`codegen: no slot for $${e.name}`);
        return { k: 'slot', off: slot, owned: false };
      }
      case 'map':
        return this.mapReadInt(e);
      case 'unary': {
        if (e.op === '!') return this.boolValue(e);
        const v = this.int(e.operand);
        const dst = v.k === 'reg' && v.owned ? v : this.temp();
        const wr = dst.k === 'reg' ? dst.r : 1;
        this.loadInto(v, wr);
        if (e.op === '-') this.em.neg(wr);
        else this.em.aluImm('xor', wr, -1);
        if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
        if (dst !== v) this.release(v);
        return dst;
      }
      case 'cast': {
        const v = this.int(e.operand);
        const { size, signed } = intTypeNames[e.type];
        if (size === 8) return v;
        const dst = v.k === 'reg' && v.owned ? v : this.temp();
        const wr = dst.k === 'reg' ? dst.r : 1;
        this.loadInto(v, wr);
        if (signed) this.em.movSx(wr, wr, (size * 8) as 8 | 16 | 32);
        else if (size === 4) this.em.alu32Mov(wr, wr);
        else this.em.aluImm('and', wr, size === 1 ? 0xff : 0xffff);
        if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
        if (dst !== v) this.release(v);
        return dst;
      }
      case 'binary':
        if (aluOf[e.op] !== undefined) return this.arith(e);
        return this.boolValue(e);
      case 'ternary': {
        const otherwise = this.em.label();
        const end = this.em.label();
        this.branch(e.cond, otherwise, false);
        const dst = this.temp();
        const put = (x: IntV) => {
          if (dst.k === 'reg') this.loadInto(x, dst.r);
          else this.storeInt(x, dst.off);
          this.release(x);
        };
        put(this.int(e.then));
        this.em.ja(end);
        this.em.place(otherwise);
        put(this.int(e.else));
        this.em.place(end);
        return dst;
      }
      case 'call':
        if (e.name === 'strncmp') return this.boolValue(e);
        break;
      default:
        break;
    }
    throw new Error(`codegen: ${e.kind} is not an integer expression here`);
  }

  /** 0 or 1 from a condition. */
  private boolValue(e: Expr): IntV {
    const yes = this.em.label();
    const end = this.em.label();
    this.branch(e, yes, true);
    const dst = this.temp();
    const wr = dst.k === 'reg' ? dst.r : 1;
    this.em.aluImm('mov', wr, 0);
    this.em.ja(end);
    this.em.place(yes);
    this.em.aluImm('mov', wr, 1);
    this.em.place(end);
    if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
    return dst;
  }

  private arith(e: Extract<Expr, { kind: 'binary' }>): IntV {
    let a = this.int(e.left);
    let b = this.int(e.right);
    if (a.k === 'const' && b.k !== 'const' && commutative.has(e.op)) [a, b] = [b, a];
    const ownsA = a.k !== 'const' && a.owned;
    const ownsB = b.k !== 'const' && b.owned;
    let dst: IntV;
    if (ownsA) dst = a;
    else if (ownsB && commutative.has(e.op)) {
      dst = b;
      b = a;
      a = dst;
    } else dst = this.temp();
    const wr = dst.k === 'reg' ? dst.r : 1;
    if (dst === a) {
      if (dst.k === 'slot') this.em.ldx(8, wr, FP, dst.off);
    } else this.loadInto(a, wr);
    this.applyOp(e.op, wr, b, e.span);
    if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
    if (b !== dst) this.release(b);
    if (a !== dst) this.release(a);
    return dst;
  }

  private builtin(name: string, span: SourceSpan): IntV {
    switch (name) {
      case 'pid':
        this.em.call(H.currentPidTgid);
        this.em.aluImm('rsh', 0, 32);
        return this.capture(0);
      case 'tid':
        this.em.call(H.currentPidTgid);
        this.em.alu32Mov(0, 0);
        return this.capture(0);
      case 'uid':
        this.em.call(H.currentUidGid);
        this.em.alu32Mov(0, 0);
        return this.capture(0);
      case 'gid':
        this.em.call(H.currentUidGid);
        this.em.aluImm('rsh', 0, 32);
        return this.capture(0);
      case 'cpu':
        this.em.call(H.smpProcessorId);
        return this.capture(0);
      case 'nsecs':
        this.em.call(H.ktimeGetNs);
        return this.capture(0);
      case 'curtask':
        this.em.call(H.currentTask);
        return this.capture(0);
      case 'rand':
        this.em.call(H.prandomU32);
        return this.capture(0);
      case 'cgroup':
        this.em.call(H.currentCgroupId);
        return this.capture(0);
      case 'jiffies':
        this.em.call(H.jiffies64);
        return this.capture(0);
      case 'elapsed': {
        this.em.call(H.ktimeGetNs);
        const now = this.capture(0);
        const keyOff = this.alloc(8);
        this.em.st(4, FP, keyOff, 0);
        this.em.loadMap(1, this.shared.startMap);
        this.fpAddr(2, keyOff);
        this.em.call(H.mapLookup);
        const done = this.em.label();
        this.em.jmpImm('jeq', 0, 0, done);
        this.em.ldx(8, 1, 0, 0);
        const wr = now.k === 'reg' ? now.r : 2;
        if (now.k === 'slot') this.em.ldx(8, wr, FP, now.off);
        this.em.alu('sub', wr, 1);
        if (now.k === 'slot') this.em.stx(8, FP, now.off, wr);
        this.em.place(done);
        return now;
      }
    }
    return fail('internal', span, `codegen: builtin ${name} has no integer code`);
  }

  /** Emits the start-time store of `elapsed` (BEGIN's first code). */
  storeStartTime(): void {
    this.em.call(H.ktimeGetNs);
    this.em.mov(7, 0);
    const keyOff = this.alloc(8);
    this.em.st(4, FP, keyOff, 0);
    this.em.loadMap(1, this.shared.startMap);
    this.fpAddr(2, keyOff);
    this.em.call(H.mapLookup);
    const done = this.em.label();
    this.em.jmpImm('jeq', 0, 0, done);
    this.em.stx(8, 0, 0, 7);
    this.em.place(done);
    this.top += 8;
  }

  /** A field relocation of the instruction `at` (a handle until encoding maps it to its slot). */
  private reloc(at: number, f: FormatField, addend: number, accessSize: number): void {
    const fmt = this.checker.unit.format!;
    const built: SpecFieldRelocation['built'] = { byteOffset: f.byteOffset, size: f.size, signed: f.signed ?? false, array: f.array !== undefined };
    if (f.array?.length !== undefined) built.arrayLength = f.array.length;
    this.relocations.push({ insnIndex: at, source: 'script', kind: 'byte-offset', event: fmt.name, flavor: '', field: f.name, dataLoc: f.dynamic !== undefined, addend, accessSize, built });
  }

  private fieldRef(e: Extract<Expr, { kind: 'field' }>): FieldRef {
    return this.checker.fieldRef(e);
  }

  private fieldInt(e: Extract<Expr, { kind: 'field' }>): IntV {
    const ref = this.fieldRef(e);
    if (ref.kind === 'provider') return this.int(ref.expr);
    const s = ref.shape;
    if (s.kind !== 'int') throw new Error(`codegen: args.${e.field} is not an integer`);
    const dst = this.temp();
    const wr = dst.k === 'reg' ? dst.r : 1;
    const at = this.em.ldx(s.size, wr, CTX, ref.field.byteOffset, s.signed);
    this.reloc(at, ref.field, 0, s.size);
    if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
    return dst;
  }

  private elementInt(e: Extract<Expr, { kind: 'index' }>): IntV {
    const base = e.base as Extract<Expr, { kind: 'field' }>;
    const ref = this.fieldRef(base);
    if (ref.kind !== 'field') throw new Error('codegen: an index of a provider argument');
    const i = Number(constantOf(e.index)!);
    const s = ref.shape;
    const elementSize = s.kind === 'int-array' ? s.elementSize : 1;
    const signed = s.kind === 'int-array' ? s.signed : false;
    const dst = this.temp();
    const wr = dst.k === 'reg' ? dst.r : 1;
    const at = this.em.ldx(elementSize as ByteSize, wr, CTX, ref.field.byteOffset + i * elementSize, signed);
    this.reloc(at, ref.field, i * elementSize, elementSize);
    if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
    return dst;
  }

  private mapReadInt(m: MapExpr): IntV {
    const l = this.layout(m);
    const keyOff = this.key(m, l);
    this.lookup(l, keyOff);
    const dst = this.temp();
    const wr = dst.k === 'reg' ? dst.r : 1;
    const done = this.em.label();
    this.em.aluImm('mov', wr, 0);
    this.em.jmpImm('jeq', 0, 0, done);
    this.em.ldx(8, wr, 0, 0);
    this.em.place(done);
    if (dst.k === 'slot') this.em.stx(8, FP, dst.off, wr);
    return dst;
  }

  // ---- conditions ---------------------------------------------------------------------------

  /** Jumps to `target` when `e` is true (`jumpIf`) or false; falls through otherwise. */
  branch(e: Expr, target: Label, jumpIf: boolean): void {
    const c = constantOf(e);
    if (c !== undefined) {
      if ((c !== 0n) === jumpIf) this.em.ja(target);
      return;
    }
    if (e.kind === 'unary' && e.op === '!') {
      this.branch(e.operand, target, !jumpIf);
      return;
    }
    if (e.kind === 'binary' && (e.op === '&&' || e.op === '||')) {
      const and = e.op === '&&';
      if (and !== jumpIf) {
        // && jumping when false, || jumping when true: either side decides
        this.branch(e.left, target, jumpIf);
        this.branch(e.right, target, jumpIf);
      } else {
        const skip = this.em.label();
        this.branch(e.left, skip, !jumpIf);
        this.branch(e.right, target, jumpIf);
        this.em.place(skip);
      }
      return;
    }
    if (e.kind === 'binary' && ['==', '!=', '<', '<=', '>', '>='].includes(e.op)) {
      const lt = this.type(e.left);
      if (lt.kind === 'string') {
        this.stringCompare(e.left, e.right, undefined, target, (e.op === '==') === jumpIf);
        return;
      }
      const signs = this.checker.operandSigns(e);
      const signed = signs.left && signs.right;
      let a = this.int(e.left);
      let b = this.int(e.right);
      let op = e.op;
      if (a.k === 'const') {
        [a, b] = [b, a];
        op = mirror[op]!;
      }
      const ra = this.load(a, 1);
      const jop = jumpOf(op, signed, !jumpIf);
      if (b.k === 'const' && fitsImm(b.v)) this.em.jmpImm(jop, ra, Number(b.v), target);
      else this.em.jmp(jop, ra, this.load(b, 2), target);
      this.release(a);
      this.release(b);
      return;
    }
    if (e.kind === 'call' && e.name === 'strncmp') {
      // strncmp() is 0 when equal: true (non-zero) when they differ
      this.stringCompare(e.args[0]!, e.args[1]!, Number(constantOf(e.args[2]!)), target, !jumpIf);
      return;
    }
    const v = this.int(e);
    this.em.jmpImm(jumpIf ? 'jne' : 'jeq', this.load(v, 1), 0, target);
    this.release(v);
  }

  /** A string in a buffer: the variable itself, or a temporary it is built in. */
  private stringBuffer(e: Expr): { off: number; size: number } {
    const t = this.type(e);
    if (t.kind !== 'string') throw new Error('codegen: not a string');
    if (e.kind === 'var') return { off: this.varSlots.get(e.name)!, size: t.size };
    const off = this.alloc(t.size);
    this.stringInto(e, off, t.size);
    return { off, size: t.size };
  }

  /**
   * Compares two strings up to their NUL (and at most `limit` bytes); jumps to `target` when they
   * are equal (`jumpIfEqual`) or when they differ. Every string buffer here is canonical: its
   * bytes after the NUL are zero and it holds a NUL (`stringInto` makes them so).
   */
  private stringCompare(left: Expr, right: Expr, limit: number | undefined, target: Label, jumpIfEqual: boolean): void {
    let a = left;
    let b = right;
    if (a.kind === 'string' && b.kind !== 'string') [a, b] = [b, a];
    const differ = jumpIfEqual ? this.em.label() : target;
    const equal = jumpIfEqual ? target : this.em.label();
    if (b.kind === 'string') {
      // against a literal: compare its bytes and its NUL, a word at a time
      const buf = this.stringBuffer(a);
      let bytes = encoder.encode(b.value);
      const nul = new Uint8Array(bytes.length + 1);
      nul.set(bytes);
      bytes = nul;
      let n = Math.min(bytes.length, buf.size, limit ?? Number.POSITIVE_INFINITY);
      if (a.kind === 'string') n = Math.min(n, encoder.encode(a.value).length + 1);
      let at = 0;
      while (at < n) {
        const width: ByteSize = n - at >= 8 ? 8 : n - at >= 4 ? 4 : n - at >= 2 ? 2 : 1;
        this.em.ldx(width, 1, FP, buf.off + at);
        const v = chunkValue(bytes, at, width);
        if (width === 8 && !fitsImm(BigInt.asIntN(64, v))) {
          this.em.movConst(2, v);
          this.em.jmp('jne', 1, 2, differ);
        } else if (width === 4 && v >= 1n << 31n) {
          this.em.movConst(2, v);
          this.em.jmp('jne', 1, 2, differ);
        } else this.em.jmpImm('jne', 1, Number(BigInt.asIntN(64, v)), differ);
        at += width;
      }
      this.em.ja(equal);
    } else {
      // canonical buffers (zero after the NUL, a NUL before the end): equal strings have equal
      // bytes over the shorter buffer, so compare words
      const x = this.stringBuffer(a);
      const y = this.stringBuffer(b);
      const n = Math.min(x.size, y.size, limit ?? Number.POSITIVE_INFINITY);
      let at = 0;
      while (at < n) {
        const width: ByteSize = n - at >= 8 ? 8 : n - at >= 4 ? 4 : n - at >= 2 ? 2 : 1;
        this.em.ldx(width, 1, FP, x.off + at);
        this.em.ldx(width, 2, FP, y.off + at);
        this.em.jmp('jne', 1, 2, differ);
        at += width;
      }
      this.em.ja(equal);
    }
    if (jumpIfEqual) this.em.place(differ);
    else this.em.place(equal);
  }

  // ---- strings ------------------------------------------------------------------------------

  /** Zeroes [from, to) of the frame (offsets from r10, `from` 8-aligned). */
  private zero(from: number, to: number): void {
    let at = from;
    while (at < to) {
      const width: ByteSize = to - at >= 8 && at % 8 === 0 ? 8 : to - at >= 4 && at % 4 === 0 ? 4 : to - at >= 2 && at % 2 === 0 ? 2 : 1;
      this.em.st(width, FP, at, 0);
      at += width;
    }
  }

  /** Writes the string `e` as exactly `size` bytes at r10 + dst: NUL-terminated, zero-padded. */
  stringInto(e: Expr, dst: number, size: number): void {
    switch (e.kind) {
      case 'string':
        this.literalInto(encoder.encode(e.value), dst, size);
        return;
      case 'ident':
        if (e.name === 'probe') {
          this.literalInto(encoder.encode(this.checker.unit.resolved.name), dst, size);
          return;
        }
        if (e.name === 'comm') {
          this.fpAddr(1, dst);
          this.em.aluImm('mov', 2, Math.min(size, 16));
          this.em.call(H.currentComm);
          if (size > 16) this.zero(dst + 16, dst + size);
          return;
        }
        break;
      case 'field': {
        const ref = this.fieldRef(e);
        if (ref.kind === 'provider') {
          this.stringInto(ref.expr, dst, size);
          return;
        }
        const s = ref.shape;
        if (s.kind === 'char-array') {
          // up to the NUL, the rest zero: strings are canonical whatever the record holds after the NUL
          this.zero(dst, dst + size);
          this.fpAddr(1, dst);
          this.em.aluImm('mov', 2, Math.min(s.length, size));
          this.em.mov(3, CTX);
          const at = this.em.aluImm('add', 3, ref.field.byteOffset);
          this.reloc(at, ref.field, 0, ref.field.size);
          this.em.call(H.probeReadKernelStr);
          return;
        }
        if (s.kind === 'data-loc-string') {
          this.zero(dst, dst + size);
          const at = this.em.ldx(4, 3, CTX, ref.field.byteOffset);
          this.reloc(at, ref.field, 0, 4);
          this.em.aluImm('and', 3, 0xffff);
          this.em.alu('add', 3, CTX);
          this.fpAddr(1, dst);
          this.em.aluImm('mov', 2, size);
          this.em.call(H.probeReadKernelStr);
          return;
        }
        break;
      }
      case 'var': {
        const slot = this.varSlots.get(e.name)!;
        const t = this.checker.unit.vars.get(e.name) as { size: number };
        this.copy(FP, slot, t.size, dst, size);
        return;
      }
      case 'map': {
        const l = this.layout(e);
        const keyOff = this.key(e, l);
        this.lookup(l, keyOff);
        const missing = this.em.label();
        const done = this.em.label();
        this.em.jmpImm('jeq', 0, 0, missing);
        this.copy(0, 0, l.valueSize, dst, size);
        this.em.ja(done);
        this.em.place(missing);
        this.zero(dst, dst + size);
        this.em.place(done);
        return;
      }
      case 'call':
        if (e.name === 'str') {
          const n = e.args[1] === undefined ? undefined : Number(constantOf(e.args[1]));
          this.stringInto(e.args[0]!, dst, size);
          if (n !== undefined && n < size) this.zero(dst + n, dst + size);
          return;
        }
        break;
      case 'ternary': {
        const otherwise = this.em.label();
        const end = this.em.label();
        this.branch(e.cond, otherwise, false);
        this.stringInto(e.then, dst, size);
        this.em.ja(end);
        this.em.place(otherwise);
        this.stringInto(e.else, dst, size);
        this.em.place(end);
        return;
      }
      default:
        break;
    }
    throw new Error(`codegen: ${e.kind} is not a string expression here`);
  }

  /** A literal's bytes as `size` bytes (truncated with a NUL, zero-padded), a word at a time. */
  private literalInto(bytes: Uint8Array, dst: number, size: number): void {
    for (let at = 0; at < size; at += 8) {
      const chunk = new Uint8Array(8);
      chunk.set(bytes.subarray(at, Math.min(at + 8, size - 1)));
      const v = chunkValue(chunk, 0, 8);
      const signed = BigInt.asIntN(64, v);
      if (fitsImm(signed)) this.em.st(8, FP, dst + at, Number(signed));
      else {
        this.em.st(4, FP, dst + at, Number(BigInt.asIntN(32, v & 0xffffffffn)));
        this.em.st(4, FP, dst + at + 4, Number(BigInt.asIntN(32, v >> 32n)));
      }
    }
  }

  /** Copies a string of `srcSize` bytes at `src + srcOff` to `size` bytes at r10 + dst. */
  private copy(src: Reg, srcOff: number, srcSize: number, dst: number, size: number): void {
    const n = Math.min(srcSize, size);
    for (let at = 0; at < n; at += 8) {
      this.em.ldx(8, 1, src, srcOff + at);
      this.em.stx(8, FP, dst + at, 1);
    }
    if (size > n) this.zero(dst + n, dst + size);
    else if (srcSize > size) this.em.st(1, FP, dst + size - 1, 0);
  }
}
