// The upload parser's worker thread (a src/jobs/worker-pool.ts worker started by
// src/data/upload-parser.ts, one file at a time): answers each `{ kind, bytes, limits }` with the
// profile, or the refusal to tell the user.
import { serveTasks } from '../jobs/worker-serve.js';
import { type ParseLimits, type ParseOutcome, parseUpload, type UploadKind } from './upload-parse.js';

export interface ParseTask {
  kind: UploadKind;
  bytes: Uint8Array<ArrayBuffer>;
  limits: ParseLimits;
}

serveTasks<ParseTask, ParseOutcome>((task) => parseUpload(task.kind, task.bytes, task.limits));
