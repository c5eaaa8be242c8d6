// Runs the cases of bpftrace-cases.ts through the installed bpftrace (root) and checks that it
// still prints what the golden text says, so drawMaps is compared with the real thing.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { drawMaps } from '../src/draw/draw-maps.js';
import { bpftraceCases } from './bpftrace-cases.js';
import { BpftraceModel } from './bpftrace-model.js';

function bpftraceMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  try {
    execFileSync('bpftrace', ['--version'], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    return 'bpftrace is not installed';
  }
  return undefined;
}
const missing = bpftraceMissing();
if (missing) console.log(`drawMaps against the installed bpftrace skipped: ${missing}`);

describe.skipIf(missing !== undefined)('drawMaps against the installed bpftrace', () => {
  it.each(bpftraceCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const out = execFileSync('bpftrace', ['-e', `BEGIN { ${c.script} exit(); }`], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] });
    // bpftrace prints `Attaching 1 probe...` and two blank lines before the maps
    const printed = out.replace(/^Attaching \d+ probes?\.\.\.\n\n\n/, '');
    const m = new BpftraceModel();
    c.build(m);
    expect(printed).toBe(c.printed);
    expect(drawMaps(m.snapshot())).toBe(printed);
  }, 90_000);
});
