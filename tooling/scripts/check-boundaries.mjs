#!/usr/bin/env node
// Checks the dependency rules of docs/ARCHITECTURE.md for one workspace folder (argument):
//  - in packages/*, only files under src/node/ may import `node:*` (the core runs in browsers);
//  - packages import only the packages below them: isa ← formats ← verifier ← compat ← script,
//    vm ← isa, formats; runtime ← compat, vm, verifier, formats, isa (the join of compat and vm;
//    nothing below imports it);
//  - no package imports an app; between apps only `import type` of the registry's router crosses;
//  - inside a package, the rooms of `rooms` below (issue 20): a room's files import only what
//    lies below them, and a file that composes rooms is imported only from above (tests aside).
// Prints each violation as `file:line: message` and exits 1 when there is any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const allowed = {
  isa: [],
  formats: ['isa'],
  verifier: ['isa', 'formats'],
  vm: ['isa', 'formats'],
  compat: ['isa', 'formats', 'verifier'],
  runtime: ['isa', 'formats', 'verifier', 'vm', 'compat'],
  script: ['isa', 'formats', 'verifier', 'compat'],
};

// Rooms inside a package, as paths relative to the package (a trailing `/` is a folder):
//  - `files` may import (relative imports) only `mayImport`, and `mayImportType` with `import type`;
//  - `file` is imported only by `importedBy` (and by tests).
const rooms = {
  vm: [
    {
      // the memory model is at the bottom: nothing of the helpers, the interpreter, the compiled
      // tier or vm.ts (a program's type only: it is what a fault names)
      files: 'src/memory/',
      mayImport: ['src/memory/', 'src/address.ts', 'src/errors.ts', 'src/insn-text.ts', 'src/run-status.ts', 'src/maps/'],
      mayImportType: ['src/program.ts'],
    },
    {
      // the helper calling convention and the helpers: above the memory model (which they reach
      // through `HelperHost`), below the interpreter, the compiled tier and vm.ts
      files: 'src/helpers/',
      mayImport: ['src/helpers/', 'src/address.ts', 'src/errors.ts', 'src/helper-ids.ts', 'src/maps/'],
      mayImportType: ['src/program.ts'],
    },
    {
      // Vm composes the rooms; the helpers, the interpreter and the compiled tier are written
      // against the hosts they declare, so none imports vm.ts back (no circle)
      file: 'src/vm.ts',
      importedBy: ['src/index.ts', 'src/runtime.ts', 'src/load-assembly.ts'],
    },
  ],
};

/** Whether package-relative `path` is `rule` (a file) or lies under it (a folder, ending in `/`). */
const inside = (path, rule) => (rule.endsWith('/') ? path.startsWith(rule) : path === rule);

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

// an import or re-export statement (its clause may span lines), or a dynamic import
const importRe = /^[ \t]*(import|export)\s+(type\s+)?(?:[\w\s{},*$]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
for (const file of files(join(dir, 'src'))) {
  const rel = relative(dir, file);
  const isNodeFile = rel.startsWith(`src${sep}node${sep}`);
  const isTest = /\.test\.tsx?$/.test(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(importRe)) {
    const i = text.slice(0, m.index).split('\n').length - 1;
    const typeOnly = Boolean(m[2]);
    const spec = m[3] ?? m[4];
    const where = `${relative(process.cwd(), file)}:${i + 1}`;
    if (spec.startsWith('.') && !isTest) {
      // the package-relative path of the imported source file (`x.js` is `x.ts` in src)
      const target = relative(dir, resolve(dirname(file), spec)).split(sep).join('/').replace(/\.js$/, '.ts');
      const from = rel.split(sep).join('/');
      for (const room of rooms[name] ?? []) {
        if (room.files && inside(from, room.files)) {
          const ok = room.mayImport.some((r) => inside(target, r)) || (typeOnly && (room.mayImportType ?? []).some((r) => inside(target, r)));
          if (!ok) problems.push(`${where}: ${room.files} may not import ${target} (a room imports only what lies below it)`);
        }
        if (room.file && target === room.file && !room.importedBy.includes(from)) {
          problems.push(`${where}: ${room.file} is imported only by ${room.importedBy.join(', ')} (no import back into it)`);
        }
      }
    }
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
  }
}

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`${p}\n`);
  process.stderr.write(`check-boundaries: ${problems.length} violation(s) in ${name}\n`);
  process.exit(1);
}
