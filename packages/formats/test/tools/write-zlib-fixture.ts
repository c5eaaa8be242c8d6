// Writes test/fixtures/trace-dat/own_v7_zlib.dat (and, with --none FILE, the same recording
// uncompressed) with Probeyard's own version 7 writer from the real ring-buffer pages of
// test/fixtures/ring-buffer/. Run: pnpm exec tsx test/tools/write-zlib-fixture.ts [--none FILE]
import { writeFileSync } from 'node:fs';
import { ownFixtureInput, ownZlibFixturePath } from '../helpers/own-trace-dat.js';
import { encodeTraceDat } from '../../src/trace-dat/encode-trace-dat.js';

writeFileSync(ownZlibFixturePath, encodeTraceDat(ownFixtureInput('zlib')));
console.log(`wrote ${ownZlibFixturePath}`);
const none = process.argv.indexOf('--none');
if (none > 0) {
  writeFileSync(process.argv[none + 1]!, encodeTraceDat(ownFixtureInput('none')));
  console.log(`wrote ${process.argv[none + 1]}`);
}
