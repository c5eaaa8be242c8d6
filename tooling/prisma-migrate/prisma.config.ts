// Prisma 6 CLI configuration for the migration generator (never used at run time).
// The WebAssembly engine (`engine: "js"`) needs a driver adapter even for a schema-to-schema diff,
// so it gets one over a throwaway in-memory PGlite.
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { defineConfig } from 'prisma/config';

// PGlite arms a long timer that would keep the CLI alive after its work is done.
const setTimeoutOriginal = globalThis.setTimeout;
globalThis.setTimeout = ((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
  const t = setTimeoutOriginal(fn, ms, ...args);
  if ((ms ?? 0) >= 1000) t.unref();
  return t;
}) as typeof setTimeout;

export default defineConfig({
  engine: 'js',
  experimental: { adapter: true },
  adapter: async () => new PrismaPGlite(new PGlite()),
});
