#!/usr/bin/env node
// Checks the dependency rules of docs/ARCHITECTURE.md for one workspace folder (argument):
//  - in packages/*, only files under src/node/ may import `node:*` (the core runs in browsers);
//  - packages import only the packages below them: isa ← formats ← verifier ← compat ← script,
//    vm ← isa, formats; runtime ← compat, vm, verifier, formats, isa (the join of compat and vm;
//    nothing below imports it);
//  - no package imports an app; between apps only `import type` of the registry's router crosses.
// Prints each violation as `file:line: message` and exits 1 when there is any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const allowed = {
  isa: [],
  formats: ['isa'],
  verifier: ['isa', 'formats'],
  vm: ['isa', 'formats'],
  compat: ['isa', 'formats', 'verifier'],
  runtime: ['isa', 'formats', 'verifier', 'vm', 'compat'],
  script: ['isa', 'formats', 'verifier', 'compat'],
};

const dir = resolve(process.argv[2] ?? '.');
const kind = dir.split(sep).at(-2); // 'packages' or 'apps'
const name = dir.split(sep).at(-1);
const problems = [];

function* files(d) {
  for (const entry of readdirSync(d)) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    const p = join(d, entry);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry)) yield p;
  }
}

const importRe = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/;
for (const file of files(join(dir, 'src'))) {
  const rel = relative(dir, file);
  const isNodeFile = rel.startsWith(`src${sep}node${sep}`);
  const isTest = /\.test\.tsx?$/.test(file);
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const m = importRe.exec(line);
      if (!m) return;
      const typeOnly = Boolean(m[2]);
      const spec = m[3] ?? m[4];
      const where = `${relative(process.cwd(), file)}:${i + 1}`;
      if (kind === 'packages') {
        if (spec.startsWith('node:') && !isNodeFile && !isTest) {
          problems.push(`${where}: '${spec}' outside src/node/ (packages run in browsers)`);
        }
        const dep = /^@probeyard\/([a-z-]+)/.exec(spec)?.[1];
        if (dep && dep !== name && !(allowed[name] ?? []).includes(dep)) {
          problems.push(`${where}: @probeyard/${name} may not import @probeyard/${dep}`);
        }
      } else if (kind === 'apps') {
        const dep = /^@probeyard\/([a-z-]+)/.exec(spec)?.[1];
        if (dep && ['registry', 'agent', 'cli', 'web'].includes(dep) && dep !== name && !typeOnly) {
          problems.push(`${where}: only a type-only import may cross from app ${name} to app ${dep}`);
        }
      }
    });
}

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`${p}\n`);
  process.stderr.write(`check-boundaries: ${problems.length} violation(s) in ${name}\n`);
  process.exit(1);
}
