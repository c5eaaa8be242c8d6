// Prints the provider table of README.md (the rows provider-corpus.test.ts checks):
// `pnpm --filter @probeyard/compat exec tsx test/print-provider-table.ts`.
import { providerTableRows } from './provider-corpus-table.js';

const { header, rows } = await providerTableRows();
console.log(`| program | ${header.join(' | ')} |`);
console.log(`|---|${header.map(() => '---').join('|')}|`);
for (const [name, cells] of rows) console.log(`| \`${name}\` | ${cells.join(' | ')} |`);
