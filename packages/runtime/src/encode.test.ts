import { describe, expect, it } from 'vitest';
import { cString, encodeEvents, jsonOfTyped } from './encode.js';
import type { LoadedSpec } from './load-spec.js';

// The registry stores payload text in PostgreSQL, which cannot hold U+0000: strings leave the
// agent as C strings, ending at their first NUL (what the kernel's own readers show).
describe('payload text is a C string', () => {
  it.each([
    ['bash', 'bash'],
    ['bash\0\0\0\0', 'bash'],
    ['a\0b', 'a'],
    ['\0', ''],
    ['', ''],
    ['ünï😀', 'ünï😀'],
  ])('cString(%j) is %j', (s, want) => {
    expect(cString(s)).toBe(want);
  });

  it('cuts decoded strings inside structs and arrays', () => {
    expect(jsonOfTyped({ comm: 'sh\0x', names: ['a\0', 'b'], pid: 7 })).toEqual({ comm: 'sh', names: ['a', 'b'], pid: 7 });
  });

  it('cuts a bpf_trace_printk line at a %c of 0', () => {
    const loaded = { spec: { maps: [] } } as unknown as LoadedSpec;
    const p = encodeEvents(loaded, [{ kind: 'printk', cpu: 0, timestamp: 5n, pid: 1, text: 'x=\0 and the rest' }], 0, 'run');
    expect(p.events).toEqual([{ timeNs: '5', cpu: 0, source: 'printk', text: 'x=' }]);
  });
});
