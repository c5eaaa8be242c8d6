// Where the library's files are, from this folder.
import { join } from 'node:path';

/** The `library/` folder. */
export const libraryDir = join(import.meta.dirname, '..');
/** C sources, `library.h` and the committed objects. */
export const programsDir = join(libraryDir, 'programs');
/** The bundled kernel format subsets (`kernels/<id>/events/...`). */
export const kernelsDir = join(libraryDir, 'kernels');
/** The test recordings (`*.dat`) and `record.sh`. */
export const recordingsDir = join(libraryDir, 'recordings');
/** The providers the library ships (`providers/<name>.json`, packages/compat's provider format). */
export const providersDir = join(libraryDir, 'providers');
/** The generated catalog. */
export const catalogPath = join(libraryDir, 'catalog.json');
/** The library README (its generated sections sit between markers). */
export const readmePath = join(libraryDir, 'README.md');
/** The shared corpus beside the repository (`../shared/corpus`), which may be absent. */
export const corpusDir = join(libraryDir, '..', '..', 'shared', 'corpus');

/** The object of a program. */
export const objectPath = (name: string): string => join(programsDir, `${name}.o`);
