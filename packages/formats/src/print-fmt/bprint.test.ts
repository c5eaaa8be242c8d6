import { describe, expect, it } from 'vitest';
import { buildRecord } from '../../test/support/build-record.js';
import { fixtureFormat } from '../../test/support/fixtures.js';
import { formatRecord } from './format-record.js';
import type { RenderEnv } from './render-env.js';

/** Packs values the way the kernel's vbin_printf() does (little-endian). */
function pack(items: ({ int: number | bigint; size: 1 | 2 | 4 | 8 } | { str: string })[]): Uint8Array {
  const out: number[] = [];
  for (const item of items) {
    if ('str' in item) {
      for (const ch of new TextEncoder().encode(item.str)) out.push(ch);
      out.push(0);
      continue;
    }
    const align = item.size === 8 ? 4 : item.size;
    while (out.length % align !== 0) out.push(0);
    let v = BigInt.asUintN(item.size * 8, BigInt(item.int));
    for (let k = 0; k < item.size; k++) {
      out.push(Number(v & 0xffn));
      v >>= 8n;
    }
  }
  return new Uint8Array(out);
}

const env: RenderEnv = {
  lookupSymbol: (a) => (a === 0xffffffffc0001000n ? { name: 'my_probe_fn', offset: 0 } : undefined),
  lookupPrintkFormat: (a) => (a === 0xffffffff82000000n ? 'pid=%d comm=%s flags=%#llx ch=%c ip=%pI4 %s\n' : undefined),
};

describe('ftrace bprint (trace_printk)', () => {
  const f = fixtureFormat('linux-6.18', 'ftrace/bprint');

  it('unpacks the vbin_printf buffer with the printk format', () => {
    const buf = pack([{ int: -7, size: 4 }, { str: 'bash' }, { int: 0x1234_5678_9abcn, size: 8 }, { int: 0x41, size: 1 }, { str: '10.0.0.1' }, { str: 'end' }]);
    const r = buildRecord(f, { ip: 0xffffffffc0001000n, fmt: 0xffffffff82000000n, buf });
    expect(formatRecord(f, r, env)).toBe('my_probe_fn: pid=-7 comm=bash flags=0x123456789abc ch=A ip=10.0.0.1 end');
  });

  it('says so when the format is not in printk_formats, like trace-cmd', () => {
    const r = buildRecord(f, { ip: 0xffffffffc0001000n, fmt: 0xffffffff82001000n, buf: new Uint8Array(4) });
    expect(formatRecord(f, r, env)).toBe('my_probe_fn: (NO FORMAT FOUND at ffffffff82001000)');
  });

  it('gives a placeholder when the arguments run past the record', () => {
    const r = buildRecord(f, { ip: 0xffffffffc0001000n, fmt: 0xffffffff82000000n, buf: pack([{ int: 1, size: 4 }]) });
    expect(formatRecord(f, r, env)).toMatch(/^\[bad record: bprint /);
  });

  it('ftrace print (trace_marker) renders through its print fmt', () => {
    const p = fixtureFormat('linux-6.18', 'ftrace/print');
    const r = buildRecord(p, { ip: 0xffffffffc0001000n, buf: new TextEncoder().encode('hello marker\n\0') });
    expect(formatRecord(p, r, env)).toBe('my_probe_fn: hello marker\n');
  });
});
