// The bundled kernels as profiles, for running programs on records of kernels there is no
// recording of.
import { type KernelProfile, profileFormat } from '@probeyard/compat';
import type { EventFormat } from '@probeyard/formats';
import { libraryEvents } from '../../src/catalog.js';
import { bundledKernelProfile, libraryKernels } from '../../src/kernels.js';

const profiles = new Map<string, Promise<KernelProfile>>();

/** The bundled kernel `id` (`android-4.4.88`, …) as a profile of the library's events. */
export function kernelProfile(id: string): Promise<KernelProfile> {
  let p = profiles.get(id);
  if (!p) {
    const kernel = libraryKernels.find((k) => k.id === id);
    if (!kernel) throw new Error(`no bundled kernel ${id}`);
    p = libraryEvents().then((events) => bundledKernelProfile(kernel, events));
    profiles.set(id, p);
  }
  return p;
}

/** An event's format on a bundled kernel. */
export async function kernelFormat(id: string, event: string): Promise<EventFormat> {
  const f = profileFormat(await kernelProfile(id), event);
  if (!f) throw new Error(`${id} has no ${event}`);
  return f;
}
