// Real artifacts and kernel formats from the repository, base64 for the API.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { webDir } from './stack.js';

export const repoRoot = join(webDir, '..', '..');
export const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
export const artifact = (path: string) => b64(readFileSync(join(repoRoot, path)));
/** A .tar.gz of one of packages/compat's fixture `events/` trees (`linux-6.18`, `android-3.10.49`, `android-3.4.0`). */
export const formatsTarball = (tree: string) => execFileSync('tar', ['-C', join(repoRoot, 'packages/compat/test/fixtures/formats', tree), '-czf', '-', '.']).toString('base64');
