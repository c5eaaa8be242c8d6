import { gunzipSync } from 'fflate';
import { FormatError } from '../errors.js';

/** One regular file of a tar archive. */
export interface TarFile {
  path: string;
  bytes: Uint8Array;
}

const blockSize = 512;
const section = 'tar';

function cString(bytes: Uint8Array, from: number, length: number): string {
  let end = from;
  while (end < from + length && bytes[end] !== 0) end++;
  let s = '';
  for (let k = from; k < end; k++) s += String.fromCharCode(bytes[k]!);
  return s;
}

function octal(bytes: Uint8Array, from: number, length: number, what: string, headerOffset: number): number {
  // GNU base-256 for big values: high bit of the first byte set.
  if ((bytes[from]! & 0x80) !== 0) {
    let v = bytes[from]! & 0x7f;
    for (let k = from + 1; k < from + length; k++) {
      v = v * 256 + bytes[k]!;
      if (v > Number.MAX_SAFE_INTEGER) break;
    }
    return v;
  }
  const text = cString(bytes, from, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) {
    throw new FormatError('malformed', `tar: ${what} '${text.slice(0, 20)}' is not octal`, { section, byteOffset: headerOffset });
  }
  return Number.parseInt(text, 8);
}

function paxPath(data: Uint8Array): string | undefined {
  const text = new TextDecoder().decode(data);
  let i = 0;
  while (i < text.length) {
    const space = text.indexOf(' ', i);
    if (space < 0) break;
    const len = Number(text.slice(i, space));
    if (!Number.isInteger(len) || len <= 0) break;
    const record = text.slice(space + 1, i + len - 1);
    if (record.startsWith('path=')) return record.slice(5);
    i += len;
  }
  return undefined;
}

/** True when `bytes` start with the gzip magic (1f 8b). */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/**
 * Regular files of a ustar/GNU/pax tar archive (`.tar`, or `.tar.gz` when `bytes` start with the
 * gzip magic). Pure JS; runs in browsers. Throws {@link FormatError} `truncated` or `malformed`.
 */
export function readTar(input: Uint8Array): TarFile[] {
  let bytes = input;
  if (isGzip(input)) {
    try {
      bytes = gunzipSync(input);
    } catch (e) {
      throw new FormatError('malformed', `tar: gzip: ${(e as Error).message}`, { section, cause: e });
    }
  }
  const files: TarFile[] = [];
  let offset = 0;
  let longName: string | undefined;
  while (offset + blockSize <= bytes.length) {
    const h = offset;
    let allZero = true;
    for (let k = h; k < h + blockSize; k++) {
      if (bytes[k] !== 0) {
        allZero = false;
        break;
      }
    }
    if (allZero) return files;
    let sum = 0;
    for (let k = 0; k < blockSize; k++) sum += k >= 148 && k < 156 ? 0x20 : bytes[h + k]!;
    const stored = octal(bytes, h + 148, 8, 'checksum', h);
    if (stored !== sum) {
      throw new FormatError('malformed', `tar: header checksum ${stored} != computed ${sum}`, { section, byteOffset: h });
    }
    const size = octal(bytes, h + 124, 12, 'size', h);
    const type = String.fromCharCode(bytes[h + 156]!);
    const dataStart = h + blockSize;
    if (dataStart + size > bytes.length) {
      throw new FormatError('truncated', `tar: entry of ${size} bytes at ${dataStart} runs past the archive's ${bytes.length} bytes`, { section, byteOffset: h });
    }
    const data = bytes.subarray(dataStart, dataStart + size);
    const magic = cString(bytes, h + 257, 6);
    const prefix = magic.startsWith('ustar') ? cString(bytes, h + 345, 155) : '';
    let path = cString(bytes, h, 100);
    if (prefix !== '') path = `${prefix}/${path}`;
    if (type === 'L') {
      longName = cString(data, 0, data.length);
    } else if (type === 'x') {
      longName = paxPath(data) ?? longName;
    } else if (type === 'g') {
      // global pax header: nothing we need
    } else {
      if (longName !== undefined) path = longName;
      longName = undefined;
      if (type === '0' || type === '\0' || type === '7') files.push({ path, bytes: data });
    }
    offset = dataStart + Math.ceil(size / blockSize) * blockSize;
  }
  if (offset < bytes.length) {
    throw new FormatError('truncated', `tar: ${bytes.length - offset} bytes left, less than a header`, { section, byteOffset: offset });
  }
  return files;
}
