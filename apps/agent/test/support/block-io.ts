// A node whose kernel calls block_rq_complete's error field `error` (4.20 and later), and the io
// provider that reads it through `errors` (1.0.0) or also through `error` (1.1.0 on): the fixtures
// of the "fix the provider" tests (providers.test.ts for a script, providers-c.test.ts for C) and
// of src/targets/through-providers.test.ts (the node's own verdict through providers).
import { encodeTraceDat } from '@probeyard/formats';

export const eventId = 392;
const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;
/**
 * block_rq_complete with its error field called `errors` (before 4.20) or `error`, at `errorOffset`
 * (28 as the kernels have it; `rwbs` follows it). {@link record} writes the layout at 28.
 */
export const completeText = (field: string, errorOffset = 28) => `name: block_rq_complete\nID: ${eventId}\nformat:\n${header}
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int ${field};\toffset:${errorOffset};\tsize:4;\tsigned:1;
\tfield:char rwbs[8];\toffset:${errorOffset + 4};\tsize:8;\tsigned:0;

print fmt: "%d,%d %s %llu + %u [%d]", ((unsigned int) ((REC->dev) >> 20)), ((unsigned int) ((REC->dev) & ((1U << 20) - 1))), REC->rwbs, (unsigned long long)REC->sector, REC->nr_sector, REC->${field}
`;

/** io@VERSION: `done` implemented for `errors`, and (withError) for `error` too. */
export const io = (version: string, withError: boolean) =>
  JSON.stringify({
    provider: 'io',
    version,
    description: 'block I/O completions',
    probes: {
      done: {
        args: { dev: 'int', bytes: 'int', error: 'int' },
        implementations: [
          { for: 'errors (before 4.20)', tracepoint: 'block/block_rq_complete', when: [{ field: 'errors', kind: 'int' }], args: { dev: 'args.dev', bytes: 'args.nr_sector * 512', error: 'args.errors' } },
          ...(withError ? [{ for: 'error', tracepoint: 'block/block_rq_complete', when: [{ field: 'error', kind: 'int' }], args: { dev: 'args.dev', bytes: 'args.nr_sector * 512', error: 'args.error' } }] : []),
        ],
      },
    },
  });

/** One block_rq_complete record of the `error` layout. */
export function record(pid: number, sector: number, nrSector: number, error: number): Uint8Array {
  const b = new Uint8Array(40);
  const v = new DataView(b.buffer);
  v.setUint16(0, eventId, true);
  v.setInt32(4, pid, true);
  v.setUint32(8, (8 << 20) | 16, true); // 8:16, /dev/sdb
  v.setBigUint64(16, BigInt(sector), true);
  v.setUint32(24, nrSector, true);
  v.setInt32(28, error, true);
  b.set(new TextEncoder().encode('R'), 32);
  return b;
}

/** The completions the node records: [nr_sector, error]; -5 is EIO, -61 ENODATA. */
export const completions: [number, number][] = [
  [8, 0],
  [8, -5],
  [16, 0],
  [8, -5],
  [256, -61],
  [8, 0],
  [8, -5],
  [32, 0],
];

/** A trace.dat of the `error` layout holding {@link completions}, one a millisecond on two CPUs. */
export function blockErrorRecording(): Uint8Array {
  return encodeTraceDat({
    eventFormats: [{ system: 'block', text: completeText('error') }],
    records: completions.map(([nr, err], i) => ({ cpu: i % 2, timeNs: 1_000_000_000 + i * 1_000_000, data: record(100 + i, 2048 + 8 * i, nr, err) })),
    cpuCount: 2,
  });
}
