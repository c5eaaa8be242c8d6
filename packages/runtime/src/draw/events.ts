// One line per output as it happens, the way a tool's user-space half prints its perf-buffer and
// ring-buffer records (every field by name, decoded with the object's BTF record struct) and as
// trace_pipe shows bpf_printk lines.
import type { OutputEventJson } from '../payloads.js';
import { valueText } from './draw-maps.js';

/** `538.357282`: trace time in seconds with microseconds (rounded), as trace-cmd report prints it. */
export function traceSeconds(timeNs: string): string {
  const ns = BigInt(timeNs);
  const us = (ns + 500n) / 1000n;
  return `${us / 1_000_000n}.${(us % 1_000_000n).toString().padStart(6, '0')}`;
}

/**
 * One output as a line: `538.357282 cpu 0 perf events: { .pid = 14627, .comm = true, ... }`, a
 * record too short for its struct as hex, a printk line as `538.357282 cpu 0 printk: text`.
 */
export function formatOutputEvent(e: OutputEventJson): string {
  const at = `${traceSeconds(e.timeNs)} cpu ${e.cpu}`;
  if (e.source === 'printk') return `${at} printk: ${e.text ?? ''}\n`;
  const kind = e.source === 'ringbuf' ? 'ringbuf' : 'perf';
  return `${at} ${kind} ${e.map ?? ''}: ${valueText(e.data)}\n`;
}
