// openFeed: a recording with its own formats as the profile, and (root, tracefs) the live feed.
import { existsSync } from 'node:fs';
import { profileFormat } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { openFeed } from '../src/node/index.js';
import { smallRecording } from './fixtures.js';

describe('openFeed', () => {
  it('a trace.dat: its records and its formats as the kernel profile', async () => {
    const feed = await openFeed(smallRecording);
    expect(feed.kind).toBe('trace-dat');
    expect(feed.live).toBeUndefined();
    expect(profileFormat(feed.profile, 'sched/sched_switch')?.id).toBeGreaterThan(0);
    let n = 0;
    for await (const b of feed.stream) while (b.next()) n++;
    await feed.stream.close();
    expect(n).toBe(869);
  });

  it('a missing file is a CompatError naming it', async () => {
    await expect(openFeed('/nonexistent/x.dat')).rejects.toThrow(/x\.dat/);
  });

  const live = process.getuid?.() === 0 && existsSync('/sys/kernel/tracing/events/sched');
  if (!live) console.log('openFeed live test skipped: needs root and a mounted tracefs');
  it.runIf(live)('live: this machine\'s profile, the events it has enabled, the instance gone on close', async () => {
    const feed = await openFeed('live', { events: ['sched/sched_switch', 'nosuch/event'] });
    try {
      expect(feed.kind).toBe('live');
      expect(feed.live!.events).toEqual(['sched/sched_switch']);
      expect(feed.profile.source).toBe('tracefs');
      expect(existsSync(feed.live!.instancePath)).toBe(true);
    } finally {
      await feed.stream.close();
    }
    expect(existsSync(feed.live!.instancePath)).toBe(false);
  }, 60_000);
});
