// tcpretrans over recordings/tcp-retransmit.dat: one event per tcp_retransmit_skb record with its
// family, ports, addresses, state and error, and the count per remote port; on a 5.10.43 record
// (no `family`, no `err`, the addresses 2 bytes earlier) the addresses and ports still come out.
import { describe, expect, it } from 'vitest';
import { kernelFormat, kernelProfile } from './support/kernels.js';
import { recordOf } from './support/record-of.js';
import { recording } from './support/recordings.js';
import { entriesOf, loadLibraryProgram, runOverRecording } from './support/run-recording.js';
import { countBy, readRecords } from './support/trace-records.js';

const TCP_SYN_SENT = 2;
const AF_INET = 2;
const mapped = (v4: number[]) => [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, ...v4];

describe('tcpretrans over tcp-retransmit.dat', () => {
  it('retransmit_events and retransmits_by_dport hold each retransmitted segment', async () => {
    const path = recording('tcp-retransmit');
    const run = await runOverRecording('tcpretrans', path);
    const records = await readRecords(path, ['tcp/tcp_retransmit_skb']);
    const expected = records.map((r) => ({
      family: r.fields.family,
      sport: r.fields.sport,
      dport: r.fields.dport,
      pad: 0,
      state: r.fields.state,
      err: r.fields.err,
      saddr: r.fields.saddr,
      daddr: r.fields.daddr,
      saddr_v6: r.fields.saddr_v6,
      daddr_v6: r.fields.daddr_v6,
    }));
    expect(expected.length).toBeGreaterThanOrEqual(6);
    expect(expected.every((e) => e.dport === 8080 && e.state === TCP_SYN_SENT && e.family === AF_INET)).toBe(true);
    expect(expected[0]!.daddr_v6).toEqual(mapped([127, 0, 0, 1]));
    expect(run.events.get('retransmit_events')).toEqual(expected);
    expect(entriesOf(run, 'retransmits_by_dport')).toEqual([...countBy(records, (r) => r.fields.dport as number)].map(([k, n]) => [k, BigInt(n)]));
  });
});

describe('tcpretrans on an android 5.10.43 record', () => {
  it('reads the ports and addresses where 5.10 has them; family and err are 0', async () => {
    const loaded = await loadLibraryProgram('tcpretrans', await kernelProfile('android-5.10.43'));
    const f = await kernelFormat('android-5.10.43', 'tcp/tcp_retransmit_skb');
    const values = { sport: 40000, dport: 443, state: 1, saddr: [10, 0, 0, 2], daddr: [93, 184, 216, 34], saddr_v6: mapped([10, 0, 0, 2]), daddr_v6: mapped([93, 184, 216, 34]) };
    loaded.runRecord('tcp/tcp_retransmit_skb', { cpu: 0, timestamp: 1, data: recordOf(f, { common_pid: 0, ...values }) });
    expect(loaded.events().get('retransmit_events')).toEqual([{ family: 0, pad: 0, err: 0, ...values }]);
    expect(entriesOf({ maps: loaded.maps() }, 'retransmits_by_dport')).toEqual([[443, 1n]]);
  });
});
