/**
 * The parts of the WebAssembly JS API used here, typed locally: the package builds without the
 * DOM library, and Node's types are only for src/node. The memory model creates the linear
 * memory with it; the compiled tier (wasm/wasm-tier.ts) compiles and instantiates modules.
 */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export type WasmModule = object;
export interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
}
export const wasmApi: WasmApi | undefined = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** Creates a linear memory of `pages` 64 KiB pages. */
export function createWasmMemory(pages: number): WasmMemory {
  if (!wasmApi) throw new Error('WebAssembly is not available');
  return new wasmApi.Memory({ initial: pages });
}

/** Whether this engine has WebAssembly at all. */
export const hasWebAssembly = wasmApi !== undefined && typeof wasmApi.Module === 'function';
