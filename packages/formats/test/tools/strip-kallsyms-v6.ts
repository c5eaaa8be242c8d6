// Makes a small copy of a trace-cmd version 6 file: the same bytes with the kallsyms block emptied
// (it is megabytes) and the CPU data moved up, still page-aligned, with the flyrecord offsets fixed.
// Used to build test/fixtures/trace-dat/ (see its README). Usage: tsx strip-kallsyms-v6.ts IN OUT
import { readFileSync, writeFileSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
const src = new Uint8Array(readFileSync(input!));
const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
let at = 10;
while (src[at] !== 0) at++;
at++;
if (src[at] !== 0) throw new Error('little-endian files only');
at += 2;
const pageSize = dv.getUint32(at, true);
at += 4;
const u32 = () => { const v = dv.getUint32(at, true); at += 4; return v; };
const u64 = () => { const v = Number(dv.getBigUint64(at, true)); at += 8; return v; };
const skip = (n: number) => { at += n; };
at += 12; skip(u64()); // header_page
at += 13; skip(u64()); // header_event
for (let n = u32(), i = 0; i < n; i++) skip(u64()); // ftrace formats
for (let s = u32(), i = 0; i < s; i++) {
  while (src[at] !== 0) at++;
  at++;
  for (let n = u32(), j = 0; j < n; j++) skip(u64());
}
const kallsymsAt = at;
const kallsymsSize = u32();
const afterKallsyms = at + kallsymsSize;
at = afterKallsyms;
skip(u32()); // printk
skip(u64()); // cmdlines
const cpus = u32();
let tag = new TextDecoder().decode(src.subarray(at, at + 10));
at += 10;
if (tag === 'options  \0') {
  for (;;) {
    const id = dv.getUint16(at, true);
    at += 2;
    if (id === 0) break;
    skip(u32());
  }
  tag = new TextDecoder().decode(src.subarray(at, at + 10));
  at += 10;
}
if (tag !== 'flyrecord\0') throw new Error(`unexpected ${JSON.stringify(tag)}`);
const table = at;
const cpuData: { offset: number; size: number }[] = [];
for (let i = 0; i < cpus; i++) cpuData.push({ offset: u64(), size: u64() });
const headerEnd = at;
// New file: header up to kallsyms, size 0, the rest of the header, padding, CPU data.
const removed = kallsymsSize;
const newHeaderEnd = headerEnd - removed;
let dataAt = Math.ceil(newHeaderEnd / pageSize) * pageSize;
const total = dataAt + cpuData.reduce((a, c) => a + Math.ceil(c.size / pageSize) * pageSize, 0);
const out = new Uint8Array(total);
const odv = new DataView(out.buffer);
out.set(src.subarray(0, kallsymsAt), 0);
odv.setUint32(kallsymsAt, 0, true);
out.set(src.subarray(afterKallsyms, headerEnd), kallsymsAt + 4);
const newTable = table - removed;
cpuData.forEach((c, i) => {
  odv.setBigUint64(newTable + i * 16, BigInt(dataAt), true);
  odv.setBigUint64(newTable + i * 16 + 8, BigInt(c.size), true);
  out.set(src.subarray(c.offset, c.offset + c.size), dataAt);
  dataAt += Math.ceil(c.size / pageSize) * pageSize;
});
writeFileSync(output!, out);
console.log(`${input}: ${src.length} bytes -> ${output}: ${out.length} bytes (kallsyms ${kallsymsSize} bytes removed)`);
