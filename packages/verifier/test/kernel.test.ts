// The same programs, loaded into the running kernel (BPF_PROG_TYPE_TRACEPOINT, or XDP and
// SOCKET_FILTER for the packet cases): the kernel must
// give the same verdict, and for rejections its log must hold our message as one of its lines.
// Skips with a printed reason when the kernel's bpf() cannot be used here (not root, no gcc, not Linux).
import { afterAll, describe, expect, it } from 'vitest';
import { verify } from '../src/index.js';
import { KernelLoader } from '../src/node/index.js';
import { ACCEPTED, PACKET_ACCEPTED, PACKET_REJECTED, REJECTED } from './programs.js';
import { asm } from './support.js';

const opened = await KernelLoader.open();
const loader = 'unavailable' in opened ? null : opened;
if ('unavailable' in opened) console.log(`kernel differential: skipped: ${opened.unavailable}`);
afterAll(() => loader?.close());

const comparable = [...ACCEPTED, ...REJECTED, ...PACKET_ACCEPTED, ...PACKET_REJECTED].filter((c) => !c.notKernel && !c.options);

describe.skipIf(!loader)('kernel verifier agrees', () => {
  it.each(comparable.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const { bytes, maps } = asm(c.source);
    // BPF_PROG_TYPE_XDP, _SOCKET_FILTER or _TRACEPOINT
    const k = await loader!.load(bytes, maps, c.xdp ? 6 : c.socketFilter ? 1 : 5);
    if (c.reject === undefined) {
      expect(k.ok ? 'accepted' : k.message).toBe('accepted');
    } else {
      expect(k.ok).toBe(false);
      const want = c.kernelMessage ?? c.reject;
      expect(k.log.split('\n').find((line) => line === want) ?? k.message).toBe(want);
    }
  });
});

// Precision: where a value decides nothing, we explore no more than the kernel does (within 1.5x).
describe.skipIf(!loader)('processed instructions in the kernel range', () => {
  it.each([
    'bpf_loop callback counting in the caller stack',
    'bounded loop counting in the stack',
    'fourteen branches whose only effect is a flag stored in the stack',
  ])('%s', async (name) => {
    const c = ACCEPTED.find((x) => x.name === name)!;
    const { bytes, maps } = asm(c.source);
    const k = await loader!.load(bytes, maps, 5);
    const ours = verify(bytes, { maps });
    expect([ours.ok, k.ok]).toEqual([true, true]);
    expect(ours.stats.insnsProcessed).toBeLessThanOrEqual(Math.ceil((k.insnsProcessed ?? 0) * 1.5));
  });
});
