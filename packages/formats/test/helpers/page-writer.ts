// A writer of ring-buffer sub-buffers for tests: builds pages event by event the way the kernel
// lays them out, so the reader can be checked on every event kind and on random pages.
export type PageEvent =
  | { kind: 'data'; delta: number; payload: Uint8Array; long?: boolean }
  | { kind: 'extend'; delta: bigint }
  | { kind: 'stamp'; ts: bigint }
  | { kind: 'padding'; delta: number; /** array[0]: bytes after the header (>= 4, or 0 for the end marker) */ size: number };

export interface PageOptions {
  pageSize?: number;
  littleEndian?: boolean;
  /** Lost events before this page: a count (stored), or 'unknown' (flag only). */
  missed?: number | 'unknown';
  /** Size of `commit` (local_t): 8 on 64-bit kernels, 4 on 32-bit. */
  commitSize?: 4 | 8;
}

export function writePage(timestamp: bigint, events: PageEvent[], options: PageOptions = {}): Uint8Array {
  const pageSize = options.pageSize ?? 4096;
  const le = options.littleEndian ?? true;
  const commitSize = options.commitSize ?? 8;
  const dataOffset = 8 + commitSize;
  const page = new Uint8Array(pageSize);
  const v = new DataView(page.buffer);
  v.setBigUint64(0, timestamp, le);
  let pos = dataOffset;
  const header = (typeLen: number, delta: number) => {
    v.setUint32(pos, le ? ((delta << 5) | typeLen) >>> 0 : ((typeLen << 27) | delta) >>> 0, le);
    pos += 4;
  };
  for (const e of events) {
    if (e.kind === 'data') {
      const len = (e.payload.length + 3) & ~3;
      if (!e.long && len > 0 && len <= 112) {
        header(len / 4, e.delta);
      } else {
        header(0, e.delta);
        v.setUint32(pos, len + 4, le);
        pos += 4;
      }
      page.set(e.payload, pos);
      pos += len;
    } else if (e.kind === 'extend' || e.kind === 'stamp') {
      const value = e.kind === 'extend' ? e.delta : e.ts & ((1n << 59n) - 1n);
      header(e.kind === 'extend' ? 30 : 31, Number(value & 0x7ffffffn));
      v.setUint32(pos, Number(value >> 27n), le);
      pos += 4;
    } else {
      // array[0] counts the bytes after the event header, itself included (kernel rb_event_length).
      header(29, e.delta);
      if (e.size > 0) v.setUint32(pos, e.size, le);
      pos += e.size;
    }
  }
  const length = pos - dataOffset;
  let commit = BigInt(length);
  if (options.missed !== undefined) {
    commit |= 1n << 31n;
    if (options.missed !== 'unknown') {
      commit |= 1n << 30n;
      if (commitSize === 8) v.setBigUint64(pos, BigInt(options.missed), le);
      else v.setUint32(pos, options.missed, le);
    }
    if (commitSize === 8) commit |= 0xffffffff00000000n; // sign-extended like the kernel's local_t
  }
  if (commitSize === 8) v.setBigUint64(8, commit, le);
  else v.setUint32(8, Number(commit), le);
  return page;
}

export function headerPageText(pageSize = 4096, commitSize: 4 | 8 = 8): string {
  const dataOffset = 8 + commitSize;
  return [
    '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;',
    `\tfield: local_t commit;\toffset:8;\tsize:${commitSize};\tsigned:1;`,
    '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;',
    `\tfield: char data;\toffset:${dataOffset};\tsize:${pageSize - dataOffset};\tsigned:0;`,
    '',
  ].join('\n');
}
