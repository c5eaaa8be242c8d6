#!/usr/bin/env node
// probeyard-web: the web app on its own. `--registry URL` (or PROBEYARD_REGISTRY_URL), `--port P`
// (or PORT, default 3000), `--host H` (default 127.0.0.1). Prints `web: listening on URL` when ready;
// SIGINT/SIGTERM stop it.
import { parseArgs } from 'node:util';
import { defaultWebPort, startWeb } from '../dist/server/start-web.js';

const { values } = parseArgs({
  options: {
    registry: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: probeyard-web --registry URL [--port P] [--host H]\n' +
      '  --registry  the registry URL (default: PROBEYARD_REGISTRY_URL, else http://127.0.0.1:4700)\n' +
      `  --port      port to listen on; 0 picks a free one (default: PORT, else ${defaultWebPort})\n` +
      '  --host      address to listen on (default 127.0.0.1)\n',
  );
  process.exit(0);
}
const registryUrl = values.registry ?? process.env.PROBEYARD_REGISTRY_URL ?? 'http://127.0.0.1:4700';
const port = Number(values.port ?? process.env.PORT ?? defaultWebPort);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`probeyard-web: --port: not a port number: ${values.port}\n`);
  process.exit(2);
}
try {
  const web = await startWeb({ registryUrl, port, host: values.host ?? '127.0.0.1' });
  process.stdout.write(`web: listening on ${web.url} (registry ${registryUrl})\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    web.close().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`web: shutdown failed: ${err.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  process.stderr.write(`probeyard-web: ${err.message}\n`);
  process.exit(1);
}
