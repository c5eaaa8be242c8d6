// Moves batches from the spool to the registry, oldest first, in requests the registry accepts
// (at most 100 batches and a few MiB). A batch leaves the spool only when the registry has it:
// acknowledged (stored now, or already stored: a retry), or refused for good, which is counted.
// A transient failure leaves everything in place for the next try.
import type { AgentApi } from '../client.js';
import { AgentError, isAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Spool } from './spool.js';

export interface UploaderOptions {
  /** Batches per request (the registry takes at most 100). */
  maxBatches?: number;
  /** Record bytes per request (the registry takes 4 MiB of payload). */
  maxBytes?: number;
  log: Logger;
  onUploaded?: (batches: number, seconds: number) => void;
  onError?: (err: AgentError) => void;
}

export class Uploader {
  private readonly maxBatches: number;
  private readonly maxBytes: number;

  constructor(
    private readonly spool: Spool,
    private readonly api: AgentApi,
    private readonly options: UploaderOptions,
  ) {
    this.maxBatches = options.maxBatches ?? 100;
    this.maxBytes = options.maxBytes ?? 3 * 1024 * 1024;
  }

  /** Uploads until the spool is empty; throws the first transient (or credential) error. */
  async drain(signal?: AbortSignal): Promise<number> {
    let sent = 0;
    while (this.spool.batches > 0 && !signal?.aborted) {
      const { entries, batches } = this.spool.peek(this.maxBatches, this.maxBytes);
      if (entries.length === 0) break;
      try {
        const started = performance.now();
        await this.api.uploadOutputs(batches);
        this.options.onUploaded?.(batches.length, (performance.now() - started) / 1000);
        this.spool.ack(entries.at(-1)!.no);
        sent += entries.length;
      } catch (err) {
        const e = isAgentError(err) ? err : new AgentError('registry', `upload outputs: ${(err as Error).message}`, { retryable: true, cause: err });
        this.options.onError?.(e);
        if (e.retryable || e.code === 'unauthorized') throw e;
        // Refused as a whole: find which batches the registry refuses, one at a time.
        sent += await this.isolate(entries, batches);
      } finally {
        this.spool.settle();
      }
    }
    return sent;
  }

  private async isolate(entries: ReturnType<Spool['peek']>['entries'], batches: ReturnType<Spool['peek']>['batches']): Promise<number> {
    let sent = 0;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const batch = batches[i]!;
      try {
        await this.api.uploadOutputs([batch]);
        this.spool.ack(entry.no);
        sent++;
      } catch (err) {
        const e = isAgentError(err) ? err : new AgentError('registry', `upload outputs: ${(err as Error).message}`, { retryable: true, cause: err });
        this.options.onError?.(e);
        if (e.retryable || e.code === 'unauthorized') throw e;
        this.spool.reject(entry.no);
        this.options.log('error', `upload outputs: the registry refused batch ${batch.sequence} of target ${batch.targetId} (${batch.kind}) for good, dropped: ${e.message}`, {
          targetId: batch.targetId,
          sequence: batch.sequence,
          registryCode: e.context.registryCode,
        });
      }
    }
    return sent;
  }
}
