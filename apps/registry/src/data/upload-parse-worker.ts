// The upload parser's worker thread (started by src/data/upload-parser.ts, one file at a time):
// says `ready` once its modules are loaded, then answers each `{ id, kind, bytes }` with
// `{ id, outcome }` (the profile, or the refusal to tell the user) or `{ id, failed }` (a bug).
import { parentPort } from 'node:worker_threads';
import { type ParseLimits, parseUpload, type UploadKind } from './upload-parse.js';

export interface ParseRequest {
  id: number;
  kind: UploadKind;
  bytes: Uint8Array<ArrayBuffer>;
  limits: ParseLimits;
  /** Test-only: spin this long first, a stand-in for a file the reader is slow on. */
  spinMs?: number;
}

const port = parentPort;
if (port) {
  port.on('message', (req: ParseRequest) => {
    if (req.spinMs) {
      const until = performance.now() + req.spinMs;
      while (performance.now() < until) {
        // busy, like a reader stuck in a loop: only terminate() ends it
      }
    }
    parseUpload(req.kind, req.bytes, req.limits).then(
      (outcome) => port.postMessage({ id: req.id, outcome }),
      (err: unknown) => port.postMessage({ id: req.id, failed: { message: String((err as Error)?.message ?? err), stack: (err as Error)?.stack } }),
    );
  });
  port.postMessage({ type: 'ready' });
}
