import type { EventFormat, FormatField } from '../event-format/event-format.js';
import { decodeCString } from '../event-format/field-read.js';
import { type EvalContext, dynamicLocation, findFieldIn, readIntAt } from './evaluate.js';

/**
 * Event handlers of trace-cmd 3.1.6 (libtraceevent plugins) that print some events their own way
 * instead of evaluating the print fmt. Behaviour reproduced from trace-cmd's output, not its code:
 *
 * - `sched_switch`: `prev_comm:prev_pid [prev_prio] S ==> next_comm:next_pid [next_prio]`; the state
 *   letters come from trace-cmd's fixed table `SDTtZXxW` (bit 0..7), `R` when none is set, so a
 *   6.18 kernel's `I` (0x80) prints `W` and `R+` (0x100) prints `R`.
 * - `sched_wakeup`, `sched_wakeup_new`: `comm:pid [prio]`, then ` success=N` and ` CPU:%03u` when
 *   the fields exist.
 * - `hrtimer_start`: `hrtimer=0x.. function=sym/0x<offset> expires=N softexpires=N`;
 *   `hrtimer_expire_entry`: `hrtimer=0x.. now=N function=sym/0x<offset>` (`0x%08llx` when the
 *   symbol is unknown).
 * - kmem `kmalloc`, `kfree`, `kmem_cache_*`: `(sym+0xoff) ` in front of the print fmt output when
 *   the call site resolves to a symbol.
 *
 * A handler returns undefined to fall back to the print fmt (a field it needs is missing).
 */
export type TraceCmdHandler = (ctx: EvalContext) => string | undefined;

function rawNumber(ctx: EvalContext, f: FormatField): bigint {
  if (f.byteOffset + f.size > ctx.recordLength || f.array !== undefined || f.dynamic !== undefined) {
    return 0n;
  }
  return readIntAt(ctx, ctx.recordOffset + f.byteOffset, f.size, false);
}

function commText(ctx: EvalContext, f: FormatField): string {
  if (f.dynamic !== undefined) {
    const loc = dynamicLocation(ctx, f);
    return decodeCString(ctx.bytes, loc.byteOffset, loc.length);
  }
  const length = Math.max(0, Math.min(f.size, ctx.recordLength - f.byteOffset));
  return decodeCString(ctx.bytes, ctx.recordOffset + f.byteOffset, length);
}

const stateLetters = 'SDTtZXxW';

function taskState(value: bigint): string {
  let out = '';
  for (let bit = 0; bit < stateLetters.length; bit++) {
    if ((value & (1n << BigInt(bit))) === 0n) continue;
    if (out !== '') out += '|';
    out += stateLetters[bit];
  }
  return out === '' ? 'R' : out;
}

function asInt(v: bigint): string {
  return String(BigInt.asIntN(32, v));
}
function asLongLong(v: bigint): string {
  return String(BigInt.asIntN(64, v));
}

function commAndPid(ctx: EvalContext, commName: string, pidName: string): string | undefined {
  const pid = findFieldIn(ctx.format, pidName);
  if (!pid) return undefined;
  const comm = findFieldIn(ctx.format, commName);
  const pidText = asLongLong(rawNumber(ctx, pid));
  return comm ? `${commText(ctx, comm)}:${pidText}` : pidText;
}

const schedSwitch: TraceCmdHandler = (ctx) => {
  const prev = commAndPid(ctx, 'prev_comm', 'prev_pid');
  const next = commAndPid(ctx, 'next_comm', 'next_pid');
  if (prev === undefined || next === undefined) return undefined;
  let out = `${prev} `;
  const prevPrio = findFieldIn(ctx.format, 'prev_prio');
  if (prevPrio) out += `[${asInt(rawNumber(ctx, prevPrio))}] `;
  const state = findFieldIn(ctx.format, 'prev_state');
  if (state) out += taskState(rawNumber(ctx, state));
  out += ` ==> ${next}`;
  const nextPrio = findFieldIn(ctx.format, 'next_prio');
  if (nextPrio) out += ` [${asInt(rawNumber(ctx, nextPrio))}]`;
  return out;
};

const schedWakeup: TraceCmdHandler = (ctx) => {
  let out = commAndPid(ctx, 'comm', 'pid');
  if (out === undefined) return undefined;
  const prio = findFieldIn(ctx.format, 'prio');
  if (prio) out += ` [${asLongLong(rawNumber(ctx, prio))}]`;
  const success = findFieldIn(ctx.format, 'success');
  if (success) out += ` success=${asLongLong(rawNumber(ctx, success))}`;
  const cpu = findFieldIn(ctx.format, 'target_cpu');
  if (cpu) out += ` CPU:${rawNumber(ctx, cpu).toString().padStart(3, '0')}`;
  return out;
};

function functionField(ctx: EvalContext, name: string): string {
  const f = findFieldIn(ctx.format, name);
  if (!f) return '';
  const address = rawNumber(ctx, f);
  const sym = ctx.env.lookupSymbol?.(address);
  return sym ? `${sym.name}/0x${sym.offset.toString(16)}` : `0x${address.toString(16).padStart(8, '0')}`;
}

function timerAddress(ctx: EvalContext): string | undefined {
  const f = findFieldIn(ctx.format, 'timer') ?? findFieldIn(ctx.format, 'hrtimer');
  return f ? `0x${rawNumber(ctx, f).toString(16)}` : undefined;
}

const hrtimerStart: TraceCmdHandler = (ctx) => {
  const timer = timerAddress(ctx);
  const expires = findFieldIn(ctx.format, 'expires');
  const soft = findFieldIn(ctx.format, 'softexpires');
  if (timer === undefined || !expires || !soft || !findFieldIn(ctx.format, 'function')) return undefined;
  return `hrtimer=${timer} function=${functionField(ctx, 'function')} expires=${rawNumber(ctx, expires)} softexpires=${rawNumber(ctx, soft)}`;
};

const hrtimerExpireEntry: TraceCmdHandler = (ctx) => {
  const timer = timerAddress(ctx);
  const now = findFieldIn(ctx.format, 'now');
  if (timer === undefined || !now || !findFieldIn(ctx.format, 'function')) return undefined;
  return `hrtimer=${timer} now=${rawNumber(ctx, now)} function=${functionField(ctx, 'function')}`;
};

/** kmem events: a call-site prefix, then the print fmt (signalled by the `\0` marker). */
export const printFmtAfterPrefix = '\u0000print-fmt\u0000';
const kmemCallSite: TraceCmdHandler = (ctx) => {
  const f = findFieldIn(ctx.format, 'call_site');
  if (!f) return undefined;
  const sym = ctx.env.lookupSymbol?.(rawNumber(ctx, f));
  if (!sym) return undefined;
  return `(${sym.name}+0x${sym.offset.toString(16)}) ${printFmtAfterPrefix}`;
};

const handlers: Record<string, TraceCmdHandler> = {
  'sched/sched_switch': schedSwitch,
  'sched/sched_wakeup': schedWakeup,
  'sched/sched_wakeup_new': schedWakeup,
  'timer/hrtimer_start': hrtimerStart,
  'timer/hrtimer_expire_entry': hrtimerExpireEntry,
  'kmem/kmalloc': kmemCallSite,
  'kmem/kmalloc_node': kmemCallSite,
  'kmem/kfree': kmemCallSite,
  'kmem/kmem_cache_alloc': kmemCallSite,
  'kmem/kmem_cache_alloc_node': kmemCallSite,
  'kmem/kmem_cache_free': kmemCallSite,
};
const systemOf: Record<string, string> = {};
for (const key of Object.keys(handlers)) systemOf[key.slice(key.indexOf('/') + 1)] = key.slice(0, key.indexOf('/'));

/** The trace-cmd handler of an event (matched by system and name; by name when the system is unknown). */
export function traceCmdHandler(format: EventFormat): TraceCmdHandler | undefined {
  const system = format.system === '' ? systemOf[format.name] : format.system;
  return system === undefined ? undefined : handlers[`${system}/${format.name}`];
}
