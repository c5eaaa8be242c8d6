import { AgentError } from './errors.js';

/** Where the agent's records come from. */
export type FeedOptions =
  | { kind: 'live'; /** tracefs mount (default: found, or mounted as root). */ tracefs?: string }
  | {
      kind: 'file';
      path: string;
      /** Start again at the end. */
      loop: boolean;
      /** `max`: as fast as it goes; `recorded`: at the recording's own pace. */
      pace: 'recorded' | 'max';
    };

/** `--feed live|FILE.dat [--loop] [--pace recorded|max]` into feed options. */
export function parseFeedOptions(feed: string | undefined, loop: boolean | undefined, pace: string | undefined): FeedOptions {
  const f = feed ?? 'live';
  if (pace !== undefined && pace !== 'recorded' && pace !== 'max') throw new AgentError('usage', `--pace: '${pace}' is not recorded or max`);
  if (f === 'live') {
    if (loop) throw new AgentError('usage', '--loop: only a recording (--feed FILE.dat) can loop');
    if (pace !== undefined) throw new AgentError('usage', '--pace: only a recording (--feed FILE.dat) has a pace');
    return { kind: 'live' };
  }
  return { kind: 'file', path: f, loop: loop ?? false, pace: (pace as 'recorded' | 'max' | undefined) ?? 'max' };
}
