// The kernels of the compatibility tables: the corpus kernels (five Android dumps from perfetto,
// this machine kind's 6.18), each bundled as the subset of its format files the library attaches
// to (`kernels/<id>/events/...`, copied unchanged) so that the tables can be recomputed without
// the corpus. test/kernels.test.ts checks the subsets against the corpus when it is present.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KernelProfile, profileOfFiles } from '@probeyard/compat';
import { kernelsDir } from './paths.js';

export interface LibraryKernel {
  /** Folder under `kernels/`. */
  id: string;
  /** Column header of the tables. */
  column: string;
  /** `uname -r` of the kernel (as far as the dump tells). */
  release: string;
  /** Where the full format set is, relative to the corpus folder. */
  corpus: string;
  /** A word on the kernel. */
  note: string;
}

export const libraryKernels: readonly LibraryKernel[] = [
  {
    id: 'android-3.4.0',
    column: 'android 3.4.0',
    release: '3.4.0',
    corpus: 'kernel-formats/android_hammerhead_MRA59G_3.4.0/events',
    note: '32-bit ARM (Nexus 5); a `common_padding` header field moves every field by 4',
  },
  {
    id: 'android-3.10.40',
    column: 'android 3.10.40',
    release: '3.10.40',
    corpus: 'kernel-formats/android_flounder_lte_LRX16F_3.10.40/events',
    note: '64-bit ARM (Nexus 9)',
  },
  {
    id: 'android-3.10.49',
    column: 'android 3.10.49',
    release: '3.10.49',
    corpus: 'kernel-formats/android_seed_N2F62_3.10.49/events',
    note: '32-bit ARM: `long` fields are 4 bytes',
  },
  {
    id: 'android-4.4.88',
    column: 'android 4.4.88',
    release: '4.4.88',
    corpus: 'kernel-formats/android_walleye_OPM5.171019.017.A1_4.4.88/events',
    note: '64-bit ARM (Pixel 2)',
  },
  {
    id: 'android-5.10.43',
    column: 'android 5.10.43',
    release: '5.10.43',
    corpus: 'kernel-formats/android_raven_AOSP.MASTER_5.10.43/events',
    note: '64-bit ARM (Pixel 6, AOSP master)',
  },
  {
    id: 'linux-6.18.44',
    column: 'linux 6.18.44',
    release: '6.18.44',
    corpus: 'tracefs/linux-6.18/all_event_formats_linux-6.18.44.tar.gz',
    note: 'x86_64, the development machine kind',
  },
];

/** The files of a bundled kernel subset: `header_page`, `header_event` and `system/event/format`. */
export function bundledKernelFiles(kernel: LibraryKernel, events: readonly string[]): { path: string; text: string }[] {
  const dir = join(kernelsDir, kernel.id, 'events');
  const files: { path: string; text: string }[] = [];
  for (const path of ['header_page', 'header_event', ...events.map((e) => `${e}/format`)]) {
    let text: string;
    try {
      text = readFileSync(join(dir, path), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // the kernel lacks the event
      throw e;
    }
    files.push({ path, text });
  }
  return files;
}

/**
 * A bundled kernel subset as a profile. Complete for the library's events: each subset was cut
 * from a complete dump of its kernel, and an event is absent from it only where the kernel lacks
 * it (test/kernels.test.ts checks both against the corpus), so a library program whose event is
 * missing here cannot attach on that kernel (`incompatible: event-missing`). For other events the
 * subset says nothing: ask it about the library's programs only.
 */
export function bundledKernelProfile(kernel: LibraryKernel, events: readonly string[]): Promise<KernelProfile> {
  return profileOfFiles(bundledKernelFiles(kernel, events), { release: kernel.release, complete: true });
}
