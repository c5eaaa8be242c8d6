// Test support for this package and for apps that test against a real registry (the CLI):
// `@probeyard/registry/testing`. Not used by the registry itself.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A fresh PGlite cluster (initdb only) costs ~30 s on this machine, an existing one ~2 s to open.
 * Tests copy one template cluster per PGlite version (made once, by whichever worker comes first)
 * and then run the real migration runner on the copy.
 */
export async function pgliteTemplate(): Promise<string> {
  const version = JSON.parse(readFileSync(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')).version;
  const template = join(tmpdir(), `probeyard-pglite-template-${version}`);
  const building = `${template}.building`;
  const deadline = Date.now() + 600_000;
  while (!existsSync(template)) {
    let mine = false;
    try {
      mkdirSync(building);
      mine = true;
    } catch {
      // Another worker builds it; take over a build left by a dead run after 10 minutes.
      if (existsSync(building) && Date.now() - statSync(building).mtimeMs > 600_000) rmSync(building, { recursive: true, force: true });
    }
    if (mine) {
      const staging = mkdtempSync(`${template}.staging-`);
      const db = await PGlite.create(staging);
      await db.close();
      renameSync(staging, template);
      rmSync(building, { recursive: true, force: true });
      break;
    }
    if (Date.now() > deadline) throw new Error(`pglite template: ${building} held for over 10 minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return template;
}

/** A new temp data folder holding a ready (not yet migrated) PGlite cluster. */
export async function prepareDataFolder(prefix = 'probeyard-data-'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(await pgliteTemplate(), join(dir, 'pglite'), { recursive: true });
  return dir;
}
