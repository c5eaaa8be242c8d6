// The agent's /metrics text for its targets: the info series of each target, and one series per
// provider probe of a running target saying which provider release and implementation it runs
// through (none for a program without provider probes), with label values escaped as the text
// format wants.
import { describe, expect, it } from 'vitest';
import { AgentMetrics, type ProviderUse, type TargetSample } from './agent-metrics.js';

const sample = (targetId: string, providers: ProviderUse[], status = 'running'): TargetSample => ({
  targetId,
  program: 'ioerrors',
  version: '1.0.0',
  digest: 'sha256:ab',
  status,
  verdict: status === 'running' ? 'relocated' : '',
  eventsSeen: 8,
  runs: 8,
  instructions: 100,
  faults: 0,
  lostEvents: 0,
  cpuSeconds: 0.001,
  outputsDropped: 0,
  providers,
});

const done = (version: string, implementation = 'error'): ProviderUse => ({ probe: 'io:::done', provider: 'io', version, implementation });

/** The lines of one series in the exposition text. */
async function series(m: AgentMetrics, name: string): Promise<string[]> {
  return (await m.text()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('probeyard_agent_target_provider_info', () => {
  it('has one series per provider probe of a running target and none for a target through no provider', async () => {
    const m = new AgentMetrics({ processMetrics: false });
    m.setSources({ targets: () => [sample('t-1', [done('1.1.0'), { probe: 'proc:::exec', provider: 'proc', version: '2.0.0', implementation: 'inline filename' }]), sample('t-2', [])] });
    expect(await series(m, 'probeyard_agent_target_provider_info')).toEqual([
      'probeyard_agent_target_provider_info{target="t-1",program="ioerrors",probe="io:::done",provider="io",version="1.1.0",implementation="error"} 1',
      'probeyard_agent_target_provider_info{target="t-1",program="ioerrors",probe="proc:::exec",provider="proc",version="2.0.0",implementation="inline filename"} 1',
    ]);
    // both targets keep their own info series
    expect(await series(m, 'probeyard_agent_target_info')).toHaveLength(2);
    expect(await m.text()).toContain('# TYPE probeyard_agent_target_provider_info gauge');
  });

  it('follows the target to a new provider release: the old release’s series is gone', async () => {
    const m = new AgentMetrics({ processMetrics: false });
    let targets = [sample('t-1', [done('1.1.0')])];
    m.setSources({ targets: () => targets });
    expect(await series(m, 'probeyard_agent_target_provider_info')).toEqual([
      'probeyard_agent_target_provider_info{target="t-1",program="ioerrors",probe="io:::done",provider="io",version="1.1.0",implementation="error"} 1',
    ]);
    targets = [sample('t-1', [done('1.2.0')])];
    expect(await series(m, 'probeyard_agent_target_provider_info')).toEqual([
      'probeyard_agent_target_provider_info{target="t-1",program="ioerrors",probe="io:::done",provider="io",version="1.2.0",implementation="error"} 1',
    ]);
    targets = [];
    expect(await series(m, 'probeyard_agent_target_provider_info')).toEqual([]);
  });

  it('escapes backslashes, quotes and newlines of label values', async () => {
    const m = new AgentMetrics({ processMetrics: false });
    m.setSources({ targets: () => [sample('t-1', [done('1.0.0', 'errors "old"\\4.19\nand before')])] });
    expect(await series(m, 'probeyard_agent_target_provider_info')).toEqual([
      'probeyard_agent_target_provider_info{target="t-1",program="ioerrors",probe="io:::done",provider="io",version="1.0.0",implementation="errors \\"old\\"\\\\4.19\\nand before"} 1',
    ]);
  });
});
