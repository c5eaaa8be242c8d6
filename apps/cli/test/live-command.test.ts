// probeyard live's own checks, before any request (exit 2, the reason in words); the session
// itself is tested end to end against an agent in apps/agent/test/live-session.test.ts.
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../src/commands/live.js';
import { run } from '../src/main.js';
import { bufferIo } from './support/buffer-io.js';

const script = 'tracepoint:sched:sched_switch { @ = count(); }';
// a registry address nothing listens on: a check that passed would fail to connect instead (exit 1)
const target = ['--registry', 'http://127.0.0.1:9', '--token', 'pyt_test'];

describe('probeyard live', () => {
  it.each([
    ['10', 10],
    ['10s', 10],
    ['2m', 120],
    [' 7 s ', 7],
  ])('reads the duration %j as %i s', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each([
    [[script, ...target], 'give one of --agent NAME and --selector k=v'],
    [[script, '--agent', 'a', '--selector', 'env=dev', ...target], 'give one of --agent NAME and --selector k=v'],
    [[script, '--agent', 'a', '--duration', '0', ...target], '--duration: at least 1 s'],
    [[script, '--agent', 'a', '--duration', '10h', ...target], "--duration: '10h' is not seconds (10, 10s, 2m)"],
    [['/nonexistent/prog.bt', '--agent', 'a', ...target], '/nonexistent/prog.bt: no such file'],
    [[script, '--selector', 'env', ...target], "--selector: 'env' is not k=v"],
    [['--agent', 'a', ...target], 'expected one SCRIPT or FILE, got 0'],
  ])('refuses %j before any request: %s', async (argv, message) => {
    const io = bufferIo({ files: {}, disk: true });
    const code = await run(['live', ...argv], io);
    expect(code).toBe(2);
    expect(io.err).toContain(message);
  });

  it('reaches for the registry once the input is usable (nothing listens here: exit 1, saying where)', async () => {
    const io = bufferIo({ files: {}, disk: true });
    const code = await run(['live', script, '--selector', 'env=dev', ...target], io);
    expect(code).toBe(1);
    expect(io.err).toContain('registry http://127.0.0.1:9');
  });
});
