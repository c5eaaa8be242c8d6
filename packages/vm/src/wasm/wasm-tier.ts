import type { LoadedProgram } from '../program.js';
import { hasWebAssembly, type WasmApi, type WasmMemory, type WasmModule, wasmApi } from '../memory/wasm-api.js';
import { type InlineLookup, inlineLookupKey } from '../maps/map.js';
import { compileToWasm } from './compile-wasm.js';

/**
 * A compiled program's entries, each returning 1 when it stopped early (0 on `exit`): `run` from
 * pc 0 with `startCount` instructions counted and r0..r9 from the register file (a tail call's
 * target); `start`, a fresh run with r1 = the context, r2 = `length` and the rest 0, no
 * register file read, and, when `staged` is not 0, the context first copied (`length` bytes)
 * from that linear address (a record of a page staged in the VM's memory); `flags` are
 * `StartFlags` (compile-wasm.ts): zero frame 0 first, store every register on exit.
 */
export interface CompiledEntry {
  run: (startCount: number) => number;
  start: (startCount: number, length: number, staged: number, flags: number) => number;
}

/** A compiled module, shared by every VM that runs the same program bytes. */
export interface CompiledModule {
  module: WasmModule;
  /** Time spent compiling (BPF → wasm bytes → `WebAssembly.Module`), ns. */
  compileNs: number;
  /** Instructions (lddw counted once) of the program. */
  instructions: number;
  wasmBytes: number;
}

export type ModuleResult = { ok: true; compiled: CompiledModule; cached: boolean } | { ok: false; reason: string };

interface CacheEntry {
  bytes: Uint8Array;
  result: { ok: true; compiled: CompiledModule } | { ok: false; reason: string };
}

const CACHE_LIMIT = 512;
/** Compiled modules by program digest (the oldest dropped past {@link CACHE_LIMIT}). */
const moduleCache = new Map<string, CacheEntry[]>();
let cacheSize = 0;

const now: () => number =
  typeof globalThis.performance?.now === 'function' ? () => globalThis.performance.now() : () => Date.now();

/**
 * Digest of program bytes for the module cache: two 32-bit FNV-1a lanes and the length (a
 * cache key, not a security hash: entries also keep the bytes and compare them).
 */
export function programDigest(bytes: Uint8Array): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ bytes.length;
  for (let i = 0; i < bytes.length; i++) {
    const x = bytes[i] as number;
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul(b ^ x ^ (i & 0xff), 0x5bd1e995);
  }
  return `${(a >>> 0).toString(16)}${(b >>> 0).toString(16)}:${bytes.length}`;
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * The compiled module of `program` (from the cache when the same bytes were compiled before
 * with the same `lookups`), or why it has none. Refusals are cached too. `lookups`: by map
 * index, the maps whose lookups the module does itself (compile-wasm.ts, CompileOptions), a part
 * of the cache key (VMs with other maps at those indexes get a module of their own).
 */
export function compiledModule(program: LoadedProgram, lookups: readonly (InlineLookup | undefined)[] = []): ModuleResult {
  if (!hasWebAssembly) return { ok: false, reason: 'WebAssembly is not available' };
  let shapes = '';
  lookups.forEach((l, k) => {
    if (l) shapes += ` ${k}:${inlineLookupKey(l)}`;
  });
  const key = programDigest(program.bytes) + shapes;
  const entries = moduleCache.get(key);
  const hit = entries?.find((e) => sameBytes(e.bytes, program.bytes));
  if (hit) return hit.result.ok ? { ok: true, compiled: hit.result.compiled, cached: true } : hit.result;
  const t0 = now();
  let result: CacheEntry['result'];
  try {
    const r = compileToWasm(program, { lookups });
    if (!r.ok) result = { ok: false, reason: r.reason };
    else {
      const module = new (wasmApi as WasmApi).Module(r.bytes);
      result = {
        ok: true,
        compiled: { module, compileNs: (now() - t0) * 1e6, instructions: r.instructions, wasmBytes: r.bytes.length },
      };
    }
  } catch (e) {
    result = { ok: false, reason: `compile error: ${(e as Error).message}` };
  }
  if (cacheSize >= CACHE_LIMIT) {
    const oldest = moduleCache.keys().next().value as string;
    cacheSize -= moduleCache.get(oldest)?.length ?? 0;
    moduleCache.delete(oldest);
  }
  moduleCache.set(key, [...(entries ?? []), { bytes: program.bytes, result }]);
  cacheSize++;
  return result.ok ? { ok: true, compiled: result.compiled, cached: false } : result;
}

/** Instantiates a compiled module over a VM's memory, with its helper dispatcher. */
export function instantiate(
  compiled: CompiledModule,
  memory: WasmMemory,
  helper: (id: number, pc: number, frame: number) => number,
): CompiledEntry {
  const instance = new (wasmApi as WasmApi).Instance(compiled.module, { vm: { memory, helper } });
  return { run: instance.exports.run as CompiledEntry['run'], start: instance.exports.start as CompiledEntry['start'] };
}

/** Empties the module cache (tests). */
export function clearModuleCache(): void {
  moduleCache.clear();
  cacheSize = 0;
}
