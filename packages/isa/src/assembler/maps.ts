import type { SourceLine } from './line.js';

/**
 * Map types a `.map` directive may name, with the kernel's `enum bpf_map_type` value
 * (`BPF_MAP_TYPE_HASH` = 1 ...).
 */
export const MapType = {
  hash: 1,
  array: 2,
  prog_array: 3,
  perf_event_array: 4,
  percpu_hash: 5,
  percpu_array: 6,
  stack_trace: 7,
  cgroup_array: 8,
  lru_hash: 9,
  lru_percpu_hash: 10,
  lpm_trie: 11,
  array_of_maps: 12,
  hash_of_maps: 13,
  queue: 22,
  stack: 23,
  ringbuf: 27,
} as const;
export type MapType = keyof typeof MapType;

/** A map declared with `.map NAME TYPE key=N value=N entries=N [flags=N]`. */
export interface MapDeclaration {
  name: string;
  type: MapType;
  /** The kernel's `enum bpf_map_type` value. */
  typeId: number;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  flags: number;
  /** Line of the declaration. */
  line: number;
}

const keys = ['key', 'value', 'entries', 'flags'] as const;

/** Parses the arguments of a `.map` directive; `column` is where `args` starts on the line (1-based). */
export function parseMapDirective(args: string, src: SourceLine, column: number): MapDeclaration {
  const words: { text: string; column: number }[] = [];
  const re = /\S+/g;
  for (let m = re.exec(args); m; m = re.exec(args)) words.push({ text: m[0], column: column + m.index });
  const shape = "expected '.map NAME TYPE key=N value=N entries=N [flags=N]'";
  if (words.length < 2) throw src.error('syntax', `syntax error: ${shape}`, column);
  type Word = { text: string; column: number };
  const [nameWord, typeWord, ...rest] = words as [Word, Word, ...Word[]];
  if (!/^[A-Za-z_]\w*$/.test(nameWord.text)) throw src.error('syntax', `syntax error: invalid map name '${nameWord.text}'`, nameWord.column);
  const type = typeWord.text as MapType;
  if (!Object.hasOwn(MapType, type)) {
    throw src.error('unsupported', `unsupported map type '${typeWord.text}' (known: ${Object.keys(MapType).join(', ')})`, typeWord.column);
  }
  const values: Partial<Record<(typeof keys)[number], number>> = {};
  for (const w of rest) {
    const kv = /^(key|value|entries|flags)=(0x[0-9a-f]+|\d+)$/i.exec(w.text);
    if (!kv) throw src.error('syntax', `syntax error: '${w.text}' (${shape})`, w.column);
    const k = kv[1]!.toLowerCase() as (typeof keys)[number];
    const v = Number(kv[2]);
    if (!Number.isSafeInteger(v) || v > 0xffffffff) throw src.error('out-of-range', `out of range: ${k}=${kv[2]} does not fit in 32 bits`, w.column);
    values[k] = v;
  }
  const ringbuf = type === 'ringbuf';
  const need = ringbuf ? (['entries'] as const) : (['key', 'value', 'entries'] as const);
  for (const k of need) {
    if (values[k] === undefined) throw src.error('syntax', `syntax error: map '${nameWord.text}' needs ${k}=N (${shape})`, column);
  }
  return {
    name: nameWord.text,
    type,
    typeId: MapType[type],
    keySize: values.key ?? 0,
    valueSize: values.value ?? 0,
    maxEntries: values.entries ?? 0,
    flags: values.flags ?? 0,
    line: src.line,
  };
}
