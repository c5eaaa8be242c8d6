// One raw instruction slot from its fields (8 bytes, little-endian), for tests and the bench.
export function slot(op: number, dst: number, src: number, off: number, imm: number): Uint8Array {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  b[0] = op;
  b[1] = (src << 4) | dst;
  v.setInt16(2, off, true);
  v.setInt32(4, imm, true);
  return b;
}
