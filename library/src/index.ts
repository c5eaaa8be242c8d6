// The program library: its programs, kernels, catalog and where its files are.
export { type Catalog, type CatalogMap, type CatalogProgram, type CatalogVerdict, attachEvents, computeCatalog, formatCatalog, libraryEvents, librarySpec } from './catalog.js';
export { verdictCell } from './cell.js';
export { libraryDisplayHint } from './display.js';
export { bundledKernelFiles, bundledKernelProfile, type LibraryKernel, libraryKernels } from './kernels.js';
export { catalogPath, corpusDir, kernelsDir, libraryDir, objectPath, programsDir, providersDir, readmePath, recordingsDir } from './paths.js';
export { type LibraryProgram, libraryPrograms } from './programs.js';
export { readmeSections, renderCompatTable, renderLacks, renderProgramsTable, replaceSections } from './readme.js';
export { libraryProviderNames, libraryProviderText, libraryProviders } from './providers.js';
