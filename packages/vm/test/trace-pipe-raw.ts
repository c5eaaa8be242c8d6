import type { EventRecord } from '../src/index.js';

/**
 * A minimal reader of ftrace ring-buffer pages (`per_cpu/cpuN/trace_pipe_raw`, 64-bit kernel,
 * 4096-byte pages: u64 timestamp, u64 commit, data) for tests and benchmarks of the runtime.
 * packages/formats has the real reader; this one keeps the VM's tests independent of it.
 */
export function* readTracePipeRaw(bytes: Uint8Array, cpu: number, pageSize = 4096): Generator<EventRecord> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let page = 0; page + pageSize <= bytes.length; page += pageSize) {
    let ts = view.getBigUint64(page, true);
    const commit = Number(view.getBigUint64(page + 8, true) & 0xfffffn);
    const end = page + 16 + commit;
    let at = page + 16;
    while (at + 4 <= end) {
      const header = view.getUint32(at, true);
      const typeLen = header & 0x1f;
      const delta = BigInt(header >>> 5);
      if (typeLen === 29) {
        // padding: length in the next word
        if (delta === 0n) break;
        at += 4 + view.getUint32(at + 4, true);
        continue;
      }
      if (typeLen === 30) {
        ts += (BigInt(view.getUint32(at + 4, true)) << 27n) + delta;
        at += 8;
        continue;
      }
      if (typeLen === 31) {
        ts = (BigInt(view.getUint32(at + 4, true)) << 27n) | delta;
        at += 8;
        continue;
      }
      ts += delta;
      let length: number;
      let data: number;
      if (typeLen === 0) {
        length = view.getUint32(at + 4, true) - 4;
        data = at + 8;
      } else {
        length = typeLen * 4;
        data = at + 4;
      }
      yield { cpu, timestamp: ts, data: bytes.subarray(data, data + length) };
      at = data + length;
    }
  }
}
