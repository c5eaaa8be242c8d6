// PREVAIL's `observe` checks: a (partial) observation of the state at a label must be consistent
// with the analysis' invariant there (`consistent`: their meet is not empty) or entailed by it
// (`entailed`: every state the observation allows is in the invariant). PREVAIL fails either
// check when the observation itself is unsatisfiable or the label is unreachable.
//
// The harness checks them against the verifier's own states, read from its level-2 log and
// joined as PREVAIL joins paths (interval hull, union of types). Only register facts are
// compared: observed stack contents, relations between variables and packet sizes are reported
// as unchecked (and the stack is not part of the invariant), and r10 takes part only when the
// case's `pre` gives it (PREVAIL knows nothing of it otherwise, while Linux always sets it).

import type { VerifyResult } from '../../src/index.js';
import type { PrevailPre, PrevailProgram } from './parse.js';

export interface Observation {
  at: string;
  point: 'pre' | 'post';
  mode: 'consistent' | 'entailed';
  constraints: string[];
}

/** What is known of one PREVAIL variable (`r0.type`, `r0.svalue`, ...). */
type Fact = { kind: 'types'; types: Set<string> } | { kind: 'range'; lo: bigint; hi: bigint };
type Facts = Map<string, Fact>;

export function readObservations(node: unknown): Observation[] {
  if (!Array.isArray(node)) return [];
  return node.map((item: Record<string, unknown>) => ({
    at: String(item.at),
    point: item.point === 'post' ? 'post' : 'pre',
    mode: item.mode === 'entailed' ? 'entailed' : 'consistent',
    constraints: (item.constraints as unknown[]).map(String),
  }));
}

const INT = String.raw`-?\d+`;

/** The facts of an observation (null when they contradict each other), and what it cannot read. */
export function observationFacts(constraints: readonly string[]): { facts: Facts | null; unsupported: string[] } {
  const facts: Facts = new Map();
  const unsupported: string[] = [];
  let bottom = false;
  const add = (name: string, f: Fact) => {
    const old = facts.get(name);
    const met = old ? meet(old, f) : f;
    if (met === null) bottom = true;
    else facts.set(name, met);
  };
  for (const c of constraints) {
    let m: RegExpExecArray | null;
    if ((m = /^(r\d+)\.type=(\w+)$/.exec(c))) add(`${m[1]}.type`, { kind: 'types', types: new Set([m[2]!]) });
    else if ((m = /^(r\d+)\.type in \{([^}]*)\}$/.exec(c))) {
      add(`${m[1]}.type`, { kind: 'types', types: new Set(m[2]!.split(',').map((t) => t.trim())) });
    } else if ((m = new RegExp(String.raw`^(r\d+\.\w+)=(${INT})$`).exec(c))) {
      add(m[1]!, { kind: 'range', lo: BigInt(m[2]!), hi: BigInt(m[2]!) });
    } else if ((m = new RegExp(String.raw`^(r\d+\.\w+)=\[\s*(${INT})\s*,\s*(${INT})\s*\]$`).exec(c))) {
      const lo = BigInt(m[2]!);
      const hi = BigInt(m[3]!);
      if (lo > hi) bottom = true;
      else add(m[1]!, { kind: 'range', lo, hi });
    } else unsupported.push(c);
  }
  return { facts: bottom ? null : facts, unsupported };
}

const larger = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const smaller = (a: bigint, b: bigint): bigint => (a < b ? a : b);

function meet(a: Fact, b: Fact): Fact | null {
  if (a.kind === 'types' && b.kind === 'types') {
    const types = new Set([...a.types].filter((t) => b.types.has(t)));
    return types.size > 0 ? { kind: 'types', types } : null;
  }
  if (a.kind === 'range' && b.kind === 'range') {
    const lo = larger(a.lo, b.lo);
    const hi = smaller(a.hi, b.hi);
    return lo <= hi ? { kind: 'range', lo, hi } : null;
  }
  return null;
}

function join(a: Fact, b: Fact): Fact | null {
  if (a.kind === 'types' && b.kind === 'types') return { kind: 'types', types: new Set([...a.types, ...b.types]) };
  if (a.kind === 'range' && b.kind === 'range') {
    return { kind: 'range', lo: smaller(a.lo, b.lo), hi: larger(a.hi, b.hi) };
  }
  return null;
}

/** `a` within `b`. */
function within(a: Fact, b: Fact): boolean {
  if (a.kind === 'types' && b.kind === 'types') return [...a.types].every((t) => b.types.has(t));
  if (a.kind === 'range' && b.kind === 'range') return a.lo >= b.lo && a.hi <= b.hi;
  return false;
}

/** PREVAIL's names of the verifier's register types. */
const TYPES: Record<string, string> = {
  scalar: 'number',
  ctx: 'ctx',
  fp: 'stack',
  map_value: 'shared',
  map_ptr: 'map_fd',
  pkt: 'packet',
  pkt_meta: 'packet',
  pkt_end: 'packet',
  ringbuf_mem: 'alloc_mem',
};

const S64_MIN = -(1n << 63n);
const S64_MAX = (1n << 63n) - 1n;
const U64_MAX = (1n << 64n) - 1n;

/**
 * The register facts of one state of the main program as the verifier logs it
 * (`R0=0 R3=scalar(smin=0,...) R10=fp0`).
 */
export function stateFacts(text: string, stackBase: number, withR10: boolean): Facts {
  const facts: Facts = new Map();
  const starts = [...text.matchAll(/(?:^|\s)(R\d+|fp-?\d+)=/g)];
  starts.forEach((m, k) => {
    const name = m[1]!;
    const begin = m.index! + m[0].length;
    const end = k + 1 < starts.length ? starts[k + 1]!.index! : text.length;
    const value = text.slice(begin, end).trim();
    if (!name.startsWith('R')) return;
    const r = Number(name.slice(1));
    if (r === 10 && !withR10) return;
    const set = (field: string, f: Fact) => facts.set(`r${r}.${field}`, f);
    if (/^-?\d+$/.test(value)) {
      const v = BigInt(value);
      set('type', { kind: 'types', types: new Set(['number']) });
      set('svalue', { kind: 'range', lo: v, hi: v });
      const u = BigInt.asUintN(64, v);
      set('uvalue', { kind: 'range', lo: u, hi: u });
      return;
    }
    if (value === 'fp0') {
      set('type', { kind: 'types', types: new Set(['stack']) });
      set('stack_offset', { kind: 'range', lo: BigInt(stackBase), hi: BigInt(stackBase) });
      return;
    }
    const pm = /^(\w+)\((.*)\)$/.exec(value);
    const type = pm ? TYPES[pm[1]!] : undefined;
    if (!pm || type === undefined) return; // unknown to PREVAIL's vocabulary: no fact
    set('type', { kind: 'types', types: new Set([type]) });
    const fields = new Map<string, string>();
    for (const part of pm[2]!.split(/,(?![^()]*\))/)) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
    }
    if (type === 'number') {
      const smin = BigInt(fields.get('smin') ?? S64_MIN);
      const smax = BigInt(fields.get('smax') ?? S64_MAX);
      const umin = BigInt(fields.get('umin') ?? 0n);
      const umax = BigInt(fields.get('umax') ?? U64_MAX);
      if (smin !== S64_MIN || smax !== S64_MAX) set('svalue', { kind: 'range', lo: smin, hi: smax });
      if (umin !== 0n || umax !== U64_MAX) set('uvalue', { kind: 'range', lo: umin, hi: umax });
      return;
    }
    // a pointer: its fixed offset, when it has no variable part
    if (fields.has('var')) return;
    const off = BigInt(fields.get('off') ?? 0);
    if (pm[1] === 'fp') set('stack_offset', { kind: 'range', lo: BigInt(stackBase) + off, hi: BigInt(stackBase) + off });
    else if (pm[1] === 'ctx') set('ctx_offset', { kind: 'range', lo: off, hi: off });
    else if (pm[1] === 'map_value') set('shared_offset', { kind: 'range', lo: off, hi: off });
    else if (pm[1] === 'pkt') set('packet_offset', { kind: 'range', lo: off, hi: off });
  });
  return facts;
}

/** The join of the states (PREVAIL keeps one invariant per label): a fact only where all have one. */
export function joinFacts(states: readonly Facts[]): Facts {
  let acc: Facts | undefined;
  for (const s of states) {
    if (!acc) {
      acc = new Map(s);
      continue;
    }
    for (const [name, f] of acc) {
      const other = s.get(name);
      const j = other ? join(f, other) : null;
      if (j) acc.set(name, j);
      else acc.delete(name);
    }
  }
  return acc ?? new Map();
}

/**
 * The states the verifier logged at a label (level 2 log): `exit` is the exit instructions of
 * the main program (not the harness' sinks), a number is PREVAIL's instruction label
 * (`lineStarts` maps it to ours); `pre` is the state before the instruction, `post` after it (not
 * for jumps and calls: null), with the instructions the label stands for. A state is taken from the line before the instruction's (`from N:`
 * or the previous instruction's) or from its own; states of a subprogram (several frames) are
 * left out, as PREVAIL's labels are those of the main program.
 */
export function statesAt(
  log: readonly string[],
  at: string,
  point: 'pre' | 'post',
  lineStarts: readonly number[],
  sinks: readonly number[],
  opcodeAt: (index: number) => number,
  length: number,
): { texts: string[]; indices: number[] } | null {
  const stateOf = (line: string | undefined) => {
    if (line === undefined) return null;
    const from = /^from \d+: (.*)$/.exec(line);
    if (from) return from[1]!;
    const k = line.indexOf(' ; ');
    return /^\d+: \(/.test(line) && k >= 0 ? line.slice(k + 3) : null;
  };
  let wanted: (i: number) => boolean;
  let after = false;
  if (at === 'exit') {
    wanted = (i) => opcodeAt(i) === 0x95 && !sinks.includes(i);
  } else {
    if (!/^\d+$/.test(at) || Number(at) >= lineStarts.length) return null;
    const index = lineStarts[Number(at)]!;
    const cls = opcodeAt(index) & 7;
    if (point === 'post' && (cls === 5 || cls === 6)) return null;
    wanted = (i) => i === index;
    after = point === 'post';
  }
  const indices: number[] = [];
  for (let i = 0; i < length; i++) if (wanted(i)) indices.push(i);
  const texts: string[] = [];
  log.forEach((line, k) => {
    const m = /^(\d+): \(/.exec(line);
    if (!m || !wanted(Number(m[1]))) return;
    const before = stateOf(log[k - 1]);
    if (before === null || /\bframe\d+:/.test(before)) return;
    const s = after ? stateOf(line) : before;
    if (s !== null) texts.push(s);
  });
  return { texts, indices };
}

/** PREVAIL's verdict on one observation, given the joined invariant (null: unreachable). */
export function checkObservation(
  obs: Observation,
  invariant: Facts | null,
  observed: Facts | null,
): boolean {
  if (observed === null) return false; // the observation is unsatisfiable
  if (invariant === null) return false; // the label is unreachable
  if (obs.mode === 'entailed') {
    // every fact of the invariant must follow from the observation
    for (const [name, f] of invariant) {
      const o = observed.get(name);
      if (!o || !within(o, f)) return false;
    }
    return true;
  }
  for (const [name, o] of observed) {
    const f = invariant.get(name);
    if (f && meet(f, o) === null) return false;
  }
  return true;
}

/**
 * Runs a case's observation checks on an accepted result (verified with `logLevel: 2`): the
 * message of the first that fails, as PREVAIL words it, and what could not be checked.
 */
export function checkObservations(
  observations: readonly Observation[],
  result: VerifyResult,
  prog: PrevailProgram,
  pre: PrevailPre,
): { failed?: string; unchecked: string[] } {
  const unchecked: string[] = [];
  for (const obs of observations) {
    const { facts: observed, unsupported } = observationFacts(obs.constraints);
    const opcodeAt = (i: number) => prog.insns[i]!.opcode;
    const found = statesAt(result.log, obs.at, obs.point, prog.lineStarts, prog.stopAt, opcodeAt, prog.insns.length);
    // states reaching PREVAIL's exit through the harness' sink are not logged
    const viaSink = obs.at === 'exit' && prog.endSink !== undefined && result.coverage[prog.endSink]! & 1;
    if (found === null || viaSink) {
      unchecked.push(`${obs.at} ${obs.point}`);
      continue;
    }
    const reached = found.indices.some((i) => result.coverage[i]! & 1);
    if (reached && found.texts.length === 0) {
      unchecked.push(`${obs.at} ${obs.point} (no state logged)`);
      continue;
    }
    const states = found.texts.map((t) => stateFacts(t, pre.stackBase, pre.r10Given));
    // an unreachable label: PREVAIL's invariant there is bottom
    const invariant = reached ? joinFacts(states) : null;
    const ok = checkObservation(obs, invariant, observed);
    // the constraints left out only weaken the observation: a verdict stands when they cannot
    // change it (an inconsistent or an entailed observation stays so with more constraints)
    const decisive = unsupported.length === 0 || observed === null || invariant === null || ok === (obs.mode === 'entailed');
    if (decisive && !ok) return { failed: `${obs.at}: observation ${obs.mode} failed at ${obs.point}`, unchecked };
    unchecked.push(...unsupported);
  }
  return { unchecked };
}
