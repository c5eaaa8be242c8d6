import type { RuntimeProbe } from '@probeyard/compat';
import type { AttachPointNode } from './ast.js';
import { fail } from './errors.js';
import type { ScriptTarget } from './target.js';

/** A stable probe of a provider (`proc:::exec`), DTrace's `provider:module:function:name`. */
export interface ProviderProbe {
  provider: string;
  module: string;
  function: string;
  name: string;
  /** As written. */
  text: string;
}

/**
 * How a provider implements one of its probes on a target: the tracepoint it attaches to, and each
 * argument as an expression of this language over that event (`args.FIELD`, `str(args.comm)`), so
 * `args.NAME` in a script means that expression.
 */
export interface ProviderBinding {
  system: string;
  event: string;
  args: Readonly<Record<string, string>>;
  /** Named in messages: `proc@1.2.0, implementation for __data_loc parent_comm`. */
  via?: string;
  /** Which implementation of the probe this is (`__data_loc parent_comm`), whatever the provider's version. */
  implementation?: string;
  /** The provider release that resolved it (`proc`, `1.2.0`), when the resolver is a registry's. */
  provider?: string;
  version?: string;
}

/** Resolves provider probes for a target; a string is the reason it cannot (shown to the user). */
export type ProviderResolver = (probe: ProviderProbe, target: ScriptTarget) => ProviderBinding | { error: string; hint?: string };

/** One attach point after expansion: what a single compiled program attaches to. */
export type ResolvedProbe =
  | { kind: 'tracepoint'; system: string; event: string; /** `tracepoint:sched:sched_switch` (the `probe` builtin) */ name: string; provider?: ProviderBinding }
  | { kind: 'runtime'; probe: RuntimeProbe; name: string };

/** Probe types of bpftrace that need kernel BPF (or a live process), with why they cannot be here. */
const refused: Record<string, string> = {
  kprobe: 'kprobes attach to kernel functions, which only kernel BPF can do; use a tracepoint',
  kretprobe: 'kretprobes attach to kernel functions, which only kernel BPF can do; use a tracepoint',
  uprobe: 'uprobes attach to user programs, which only kernel BPF can do',
  uretprobe: 'uretprobes attach to user programs, which only kernel BPF can do',
  usdt: 'USDT probes attach to user programs, which only kernel BPF can do',
  kfunc: 'kfuncs (fentry) attach to kernel functions, which only kernel BPF can do; use a tracepoint',
  kretfunc: 'kretfuncs (fexit) attach to kernel functions, which only kernel BPF can do; use a tracepoint',
  fentry: 'fentry attaches to kernel functions, which only kernel BPF can do; use a tracepoint',
  fexit: 'fexit attaches to kernel functions, which only kernel BPF can do; use a tracepoint',
  rawtracepoint: 'raw tracepoints pass kernel pointers, not a record; use the tracepoint of the same name',
  software: 'software events are perf counters, not trace records',
  hardware: 'hardware events are perf counters, not trace records',
  profile: 'profile samples the CPUs with perf, which trace records cannot do; use interval for periodic output',
  watchpoint: 'watchpoints need the CPU debug registers',
  asyncwatchpoint: 'watchpoints need the CPU debug registers',
  iter: 'iterators walk kernel objects, which only kernel BPF can do',
};

const aliases: Record<string, string> = {
  t: 'tracepoint',
  i: 'interval',
  k: 'kprobe',
  kr: 'kretprobe',
  u: 'uprobe',
  ur: 'uretprobe',
  U: 'usdt',
  f: 'kfunc',
  fr: 'kretfunc',
  rt: 'rawtracepoint',
  s: 'software',
  h: 'hardware',
  p: 'profile',
  w: 'watchpoint',
  aw: 'asyncwatchpoint',
  it: 'iter',
};

const unitNs: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };

/** `sys_enter_*` as a regular expression (`*` any run, `?` one character). */
function wildcardRe(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.')}$`);
}

const hasWildcard = (s: string) => /[*?]/.test(s);

/** Close names, for "did you mean" hints: same prefix or a small edit distance. */
export function closeNames(name: string, candidates: Iterable<string>, limit = 4): string[] {
  const scored: [number, string][] = [];
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d <= Math.max(2, Math.floor(name.length / 3)) || (name.length >= 3 && c.startsWith(name))) scored.push([d, c]);
  }
  return scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)).slice(0, limit).map(([, c]) => c);
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Expands one attach point into the probes it means on `target`: a tracepoint with wildcards into
 * every matching event, a provider probe through `providers`, `BEGIN`/`END`/`interval` into runtime
 * probes. Everything else fails with the reason.
 */
export function resolveAttachPoint(node: AttachPointNode, target: ScriptTarget, providers: ProviderResolver | undefined): ResolvedProbe[] {
  const text = node.text;
  const span = node.span;
  if (text === 'BEGIN') return [{ kind: 'runtime', probe: { kind: 'begin' }, name: 'BEGIN' }];
  if (text === 'END') return [{ kind: 'runtime', probe: { kind: 'end' }, name: 'END' }];
  const parts = text.split(':');
  const head = parts[0]!;
  const type = aliases[head] ?? head;
  if (type === 'tracepoint') {
    if (parts.length !== 3 || parts[1] === '' || parts[2] === '') {
      fail('syntax', span, `probe ${text}: a tracepoint is written tracepoint:SYSTEM:EVENT`, 'for example tracepoint:sched:sched_switch or t:syscalls:sys_enter_*');
    }
    const [, system, event] = parts as [string, string, string];
    if (!hasWildcard(system) && !hasWildcard(event)) {
      if (target.hasEvent(system, event) === false) {
        const close = closeNames(`${system}/${event}`, target.events ?? []);
        fail('not-found', span, `probe ${text}: ${target.description} has no event ${system}/${event}`, close.length > 0 ? `did you mean ${close.map((c) => `tracepoint:${c.replace('/', ':')}`).join(', ')}?` : undefined);
      }
      return [{ kind: 'tracepoint', system, event, name: `tracepoint:${system}:${event}` }];
    }
    if (target.events === undefined) {
      fail('not-found', span, `probe ${text}: wildcards need the kernel's list of events, and ${target.description} gives none`, 'compile against a kernel profile (a trace.dat, an events tree, or the live tracefs)');
    }
    const sre = wildcardRe(system);
    const ere = wildcardRe(event);
    const out: ResolvedProbe[] = [];
    for (const key of target.events) {
      const [s, e] = key.split('/') as [string, string];
      if (sre.test(s) && ere.test(e)) out.push({ kind: 'tracepoint', system: s, event: e, name: `tracepoint:${s}:${e}` });
    }
    if (out.length === 0) fail('not-found', span, `probe ${text}: matches no event of ${target.description}`);
    return out;
  }
  if (type === 'interval') {
    // interval:s:1, interval:ms:100, interval:hz:10, and the newer interval:1s
    let periodNs: number | undefined;
    if (parts.length === 3 && /^\d+$/.test(parts[2]!)) {
      const n = Number(parts[2]);
      const unit = parts[1]!;
      if (unit === 'hz') periodNs = n > 0 ? Math.round(1e9 / n) : undefined;
      else if (unitNs[unit] !== undefined) periodNs = n * unitNs[unit];
    } else if (parts.length === 2) {
      const m = /^(\d+)(ns|us|ms|s|hz)$/.exec(parts[1]!);
      if (m) periodNs = m[2] === 'hz' ? (Number(m[1]) > 0 ? Math.round(1e9 / Number(m[1])) : undefined) : Number(m[1]) * unitNs[m[2]!]!;
    }
    if (periodNs === undefined || !Number.isSafeInteger(periodNs) || periodNs <= 0) {
      fail('syntax', span, `probe ${text}: an interval is written interval:UNIT:N (UNIT s, ms, us, ns or hz; N > 0)`, 'for example interval:s:1 or interval:ms:100');
    }
    return [{ kind: 'runtime', probe: { kind: 'interval', periodNs }, name: text.replace(/^i:/, 'interval:') }];
  }
  const why = refused[type];
  if (why !== undefined) fail('unsupported', span, `probe ${text}: ${type} probes are not supported here`, why);
  if (parts.length === 4) {
    const probe: ProviderProbe = { provider: parts[0]!, module: parts[1]!, function: parts[2]!, name: parts[3]!, text };
    if (providers === undefined) fail('not-found', span, `probe ${text}: no provider '${probe.provider}' is known here`, 'provider probes are resolved by the registry for the kernel they run on');
    const b = providers(probe, target);
    if ('error' in b) fail('not-found', span, `probe ${text}: ${b.error}`, b.hint);
    if (target.hasEvent(b.system, b.event) === false) {
      fail('not-found', span, `probe ${text}: implemented by ${b.system}/${b.event}${b.via ? ` (${b.via})` : ''}, which ${target.description} does not have`);
    }
    return [{ kind: 'tracepoint', system: b.system, event: b.event, name: text, provider: b }];
  }
  const known = ['tracepoint', 'interval', 'BEGIN', 'END'];
  const close = closeNames(head, [...known, ...Object.keys(aliases)]);
  fail('syntax', span, `probe ${text}: unknown probe type '${head}'`, `probes here are tracepoint:SYSTEM:EVENT (t:), BEGIN, END and interval:s:N${close.length > 0 ? `; did you mean ${close.join(', ')}?` : ''}`);
}
