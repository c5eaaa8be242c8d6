import { describe, expect, it } from 'vitest';
import { formatPrintf, parsePrintf } from './script-printf.js';
import type { ScriptPrintfArg } from './script-spec.js';

/** A printf record: the action index (0), then each argument at 8-byte steps. */
function record(args: (bigint | string)[]): { bytes: Uint8Array; layout: ScriptPrintfArg[] } {
  const layout: ScriptPrintfArg[] = [];
  let at = 8;
  for (const a of args) {
    const size = typeof a === 'string' ? Math.max(8, (new TextEncoder().encode(a).length + 8) & ~7) : 8;
    layout.push({ byteOffset: at, type: typeof a === 'string' ? { kind: 'string', size } : { kind: 'int', size: 8, signed: true } });
    at += size;
  }
  const bytes = new Uint8Array(at);
  const view = new DataView(bytes.buffer);
  args.forEach((a, i) => {
    const off = layout[i]!.byteOffset;
    if (typeof a === 'string') bytes.set(new TextEncoder().encode(a), off);
    else view.setBigInt64(off, BigInt.asIntN(64, a), true);
  });
  return { bytes, layout };
}

describe('formatPrintf: C printf on x86-64, as bpftrace passes 64-bit values to snprintf', () => {
  it.each([
    ['%d', [-1n], '-1'],
    ['%d', [(1n << 32n) + 5n], '5'],
    ['%i', [-7n], '-7'],
    ['%u', [-1n], '4294967295'],
    ['%lu', [-1n], '18446744073709551615'],
    ['%ld %lld %llu', [-1n, -2n, 3n], '-1 -2 3'],
    ['%x %X %#x %08x', [255n, 255n, 255n, 255n], 'ff FF 0xff 000000ff'],
    ['[%5d] [%-5d] [%.3d] [%+d]', [42n, 42n, 7n, 3n], '[   42] [42   ] [007] [+3]'],
    ['%o %c%c', [8n, 72n, 105n], '10 Hi'],
    ['%p %p', [0n, 4096n], '(nil) 0x1000'],
    ['%hhd %hd %hu', [257n, 65537n, -1n], '1 1 65535'],
    ['%s|%-8s|%8s|%.2s', ['abc', 'ab', 'ab', 'abc'], 'abc|ab      |      ab|ab'],
    ['100%% %d%%', [5n], '100% 5%'],
    ['no conversions\n', [], 'no conversions\n'],
  ] as const)('%j', (format, args, want) => {
    const { bytes, layout } = record([...args]);
    expect(formatPrintf({ kind: 'printf', format, args: layout }, bytes)).toBe(want);
  });

  it('reads a string up to its NUL, and UTF-8', () => {
    const { bytes, layout } = record(['héllo']);
    bytes[layout[0]!.byteOffset + 3] = 0;
    expect(formatPrintf({ kind: 'printf', format: '<%s>', args: layout }, bytes)).toBe('<hé>');
  });
});

describe('parsePrintf', () => {
  it('splits text and conversions', () => {
    expect(parsePrintf('pid %-6d comm %s\n')).toEqual({
      segments: [
        'pid ',
        { text: '%-6d', flags: '-', width: 6, precision: undefined, length: '', conversion: 'd', at: 4 },
        ' comm ',
        { text: '%s', flags: '', width: undefined, precision: undefined, length: '', conversion: 's', at: 14 },
        '\n',
      ],
    });
  });

  it.each([
    ['%q', 0],
    ['ok %d %y', 6],
    ['%', 0],
    ['%5', 0],
  ])('%j: no conversion at %d', (format, at) => {
    expect(parsePrintf(format)).toMatchObject({ badAt: at });
  });
});
