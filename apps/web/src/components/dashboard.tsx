'use client';

// A deployment's output dashboard, fleet-wide (every target's latest snapshot merged) or for one
// target: sorted counts and histograms as bpftrace draws them, rates over time from successive
// snapshots, a heatmap of each histogram over time, the event tail with a filter, and the lost and
// dropped counts beside the data they affect. Live: the registry's `output.watch` stream says when
// batches arrive; each update refetches the latest state, coalesced (one request in flight, one
// queued), so the page shows the newest state and never falls behind.
import type { AppRouter } from '@probeyard/registry';
import { useQuery } from '@tanstack/react-query';
import type { inferRouterOutputs } from '@trpc/server';
import { useSubscription } from '@trpc/tanstack-react-query';
import Link from 'next/link';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ago, formatCount, formatTime } from '../lib/format';
import { useTRPC } from '../lib/trpc';
import { DataTable } from './data-table';
import { BarChart, Heatmap, TimeChart } from './charts';

type Latest = inferRouterOutputs<AppRouter>['output']['latest'];
type MapView = Latest['maps'][number];

const ranges = [
  { key: '5m', label: '5 min', ms: 5 * 60_000 },
  { key: '15m', label: '15 min', ms: 15 * 60_000 },
  { key: '1h', label: '1 hour', ms: 3600_000 },
  { key: '6h', label: '6 hours', ms: 6 * 3600_000 },
  { key: '24h', label: '24 hours', ms: 24 * 3600_000 },
];

/** A snapshot older than this (agents snapshot every 10 s by default) makes its target stale. */
const staleSnapshotMs = 45_000;

/** Calls `run` now, or when the current run ends if one is in flight: never two at once, never a backlog. */
function useCoalesced(run: () => Promise<unknown>) {
  const inFlight = useRef(false);
  const again = useRef(false);
  const fn = useRef(run);
  fn.current = run;
  return useCallback(() => {
    if (inFlight.current) {
      again.current = true;
      return;
    }
    inFlight.current = true;
    const loop = (): Promise<void> =>
      fn.current()
        .catch(() => {})
        .then(() => {
          if (again.current) {
            again.current = false;
            return loop();
          }
          inFlight.current = false;
        });
    void loop();
  }, []);
}

/**
 * `run` at most once every `ms`: at once when the last run is older, otherwise once when the
 * window ends, so the last update inside a window is never dropped (it was: the event tail showed
 * a new event only when a later update happened to come).
 */
function useThrottled(run: () => void, ms: number): () => void {
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const fn = useRef(run);
  fn.current = run;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    const fire = () => {
      timer.current = undefined;
      last.current = Date.now();
      fn.current();
    };
    const wait = last.current + ms - Date.now();
    if (wait <= 0) fire();
    else timer.current ??= setTimeout(fire, wait);
  }, [ms]);
}

function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

export function Dashboard({ deploymentId, targetId, initial, range }: { deploymentId: string; targetId?: string | undefined; initial: Latest; range: string }) {
  const trpc = useTRPC();
  const now = useNow(1000);
  const rangeMs = ranges.find((r) => r.key === range)?.ms ?? 15 * 60_000;
  const latest = useQuery({ ...trpc.output.latest.queryOptions({ deploymentId, ...(targetId ? { targetId } : {}) }), initialData: initial, staleTime: Number.POSITIVE_INFINITY });
  const [window_, setWindow] = useState(() => ({ to: Date.now() }));
  const series = useQuery({
    ...trpc.output.series.queryOptions({ deploymentId, ...(targetId ? { targetId } : {}), from: new Date(window_.to - rangeMs).toISOString(), to: new Date(window_.to).toISOString(), buckets: 120 }),
    placeholderData: (prev) => prev,
  });
  const [filter, setFilter] = useState('');
  const [appliedFilter, setAppliedFilter] = useState('');
  const events = useQuery({
    ...trpc.output.events.queryOptions({ deploymentId, ...(targetId ? { targetId } : {}), limit: 50, ...(appliedFilter ? { filter: appliedFilter } : {}) }),
    placeholderData: (prev) => prev,
  });
  const [updates, setUpdates] = useState(0);
  const [live, setLive] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const refreshLatest = useCoalesced(() => latest.refetch());
  // Rates and the event tail cost more: at most every 2 s and 1 s, the last update of a window
  // applied when it ends.
  const refreshSeries = useThrottled(() => setWindow({ to: Date.now() }), 2000);
  const fetchEvents = useCoalesced(() => events.refetch());
  const refreshEvents = useThrottled(fetchEvents, 1000);

  useSubscription(
    trpc.output.watch.subscriptionOptions(
      { deploymentId },
      {
        onStarted: () => setLive('live'),
        onData: (d) => {
          setLive('live');
          if (d.kind !== 'update') return;
          setUpdates((n) => n + 1);
          refreshLatest();
          refreshSeries();
          refreshEvents();
        },
        onError: () => setLive('reconnecting'),
      },
    ),
  );

  const data = latest.data ?? initial;
  const lastReceived = data.lastReceivedAt ? Date.parse(data.lastReceivedAt) : null;
  const withSnapshots = data.targets.filter((t) => t.snapshot);
  const stale = data.targets.filter((t) => t.status === 'running' && (!t.snapshot || now - Date.parse(t.snapshot.receivedAt) > staleSnapshotMs));
  const lost = data.totals.eventsLost;

  return (
    <>
      <div className="dash-status" aria-live="polite">
        <span className={`badge live-${live}`} data-testid="live-state">
          {live === 'live' ? '● live' : live === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>{' '}
        <span data-testid="last-updated">
          Last updated {lastReceived ? `${ago(data.lastReceivedAt, now)} (${formatTime(data.lastReceivedAt)})` : 'never: no outputs yet'}
        </span>
        <span className="muted small" data-testid="update-count">
          {' '}
          · {updates} live updates
        </span>
        {stale.length ? (
          <span className="stale" data-testid="stale-targets">
            {' '}
            · stale: {stale.map((t) => t.hostname).join(', ')} (no snapshot for over {staleSnapshotMs / 1000} s)
          </span>
        ) : null}
      </div>
      <div className="grid2 dash-summary">
        <div className="card">
          <dl className="kv">
            <dt>Targets reporting</dt>
            <dd>
              {withSnapshots.length} of {data.targets.length}
            </dd>
            <dt>Events seen</dt>
            <dd data-testid="events-seen">{formatCount(data.totals.eventsSeen)}</dd>
            <dt>Events lost</dt>
            <dd className={lost ? 'stale' : undefined} data-testid="events-lost">
              {formatCount(lost)}
              {lost ? ' (ring-buffer overruns, or the agent throttling a program over its CPU budget: the counts below miss these)' : ''}
            </dd>
            <dt>Faults</dt>
            <dd className={data.totals.faults ? 'stale' : undefined}>{formatCount(data.totals.faults)}</dd>
            <dt>Outputs dropped</dt>
            <dd className={data.totals.outputsDropped ? 'stale' : undefined}>{formatCount(data.totals.outputsDropped)}</dd>
            <dt>CPU</dt>
            <dd>{data.totals.cpuNs >= 1e9 ? `${(data.totals.cpuNs / 1e9).toFixed(2)} s` : `${(data.totals.cpuNs / 1e6).toFixed(3)} ms`}</dd>
          </dl>
        </div>
        <div className="card">
          <h3>Targets</h3>
          <DataTable
            rows={data.targets}
            rowKey={(t) => t.targetId}
            columns={[
              { header: 'Agent', cell: (t) => <Link href={`?target=${t.targetId}`}>{t.hostname}</Link> },
              {
                header: 'Status',
                className: (t) => `status s-${t.status}`,
                title: (t) => t.reason ?? undefined,
                cell: (t) => (
                  <>
                    {t.status}
                    {t.reason ? <div className="small muted">{t.reason}</div> : null}
                  </>
                ),
              },
              {
                header: 'Snapshot',
                className: 'small',
                cell: (t) =>
                  t.snapshot ? (
                    <>
                      {ago(t.snapshot.receivedAt, now)} · run {t.snapshot.runId.slice(0, 8)}
                    </>
                  ) : (
                    'none yet'
                  ),
              },
              { header: 'Lost', numeric: true, cell: (t) => (t.snapshot ? formatCount(t.snapshot.eventsLost) : '—') },
            ]}
          />
        </div>
      </div>

      {data.maps.length === 0 ? (
        <p className="empty" data-testid="no-outputs">
          No map snapshots yet. Targets report every 10 s once their agent runs the program
          {data.targets.length === 0 ? '; no agent matches this deployment’s selector yet' : ''}. This page updates by itself.
        </p>
      ) : null}
      {data.maps.map((m) => (
        <MapPanel key={m.name} map={m} lost={lost} />
      ))}

      <section className="card" aria-labelledby="rates-heading">
        <div className="panel-head">
          <h2 id="rates-heading">Over time</h2>
          <nav className="toolbar" aria-label="Time range">
            {ranges.map((r) => (
              <Link key={r.key} href={`?${new URLSearchParams({ ...(targetId ? { target: targetId } : {}), range: r.key })}`} aria-current={r.key === range ? 'page' : undefined}>
                {r.label}
              </Link>
            ))}
          </nav>
        </div>
        {series.data ? (
          <>
            <p className="muted small">
              Last {ranges.find((r) => r.key === range)?.label ?? '15 min'}, per {series.data.stepMs / 1000} s bucket, per second.{' '}
              {series.data.resets ? `${series.data.resets} counter reset(s) (an agent restarted the program) counted from zero, not as drops. ` : ''}
              {series.data.truncated ? 'Too many snapshots in this range: the newest were left out; pick a shorter range.' : ''}
            </p>
            <h3>Events per second, and events lost</h3>
            <TimeChart
              times={series.data.times}
              unit="events/s"
              label="Events seen per second and events lost, over time"
              series={[
                { label: 'events/s', values: series.data.eventsPerSecond },
                { label: 'lost', values: series.data.eventsLost },
              ]}
            />
            {series.data.maps.map((m) => (
              <div key={m.name}>
                <h3>
                  {m.name}: increase per second{m.display.unit ? ` (${m.display.unit})` : ''}
                </h3>
                <TimeChart times={series.data.times} unit="per s" label={`Rate of ${m.name} over time`} series={[{ label: m.name, values: m.ratePerSecond }]} />
                {m.heat ? (
                  <>
                    <h3>{m.name}: histogram over time</h3>
                    <Heatmap times={series.data.times} stepMs={series.data.stepMs} labels={m.heat.labels} counts={m.heat.counts} label={`Heatmap of ${m.name}: buckets over time`} />
                  </>
                ) : null}
              </div>
            ))}
          </>
        ) : series.error ? (
          <p className="alert alert-error">{series.error.message}</p>
        ) : (
          <p className="muted">Loading the series…</p>
        )}
      </section>

      <section className="card" aria-labelledby="events-heading">
        <div className="panel-head">
          <h2 id="events-heading">Events</h2>
          <form
            className="toolbar"
            onSubmit={(e) => {
              e.preventDefault();
              setAppliedFilter(filter.trim());
            }}
          >
            <label htmlFor="ev-filter">
              Filter
              <input id="ev-filter" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="comm, pid, text…" />
            </label>
            <button type="submit" className="button">
              Apply
            </button>
          </form>
        </div>
        {events.data?.dropped ? (
          <p className="stale">{formatCount(events.data.dropped)} events were dropped by agents (over their rate or size bounds) in the batches shown.</p>
        ) : null}
        <DataTable
          rows={events.data?.events ?? []}
          rowKey={(e, i) => `${e.targetId}-${e.sequence}-${i}`}
          testId="events-table"
          empty={appliedFilter ? 'No event matches the filter.' : 'No output events: this program emits none, or none yet (ring buffer, perf, printk).'}
          emptyClassName="muted"
          columns={[
            { header: 'Trace time (ns)', className: 'mono small', cell: (e) => e.timeNs },
            { header: 'CPU', numeric: true, cell: (e) => e.cpu },
            { header: 'Source', className: 'small', cell: (e) => `${e.source}${e.map ? ` ${e.map}` : ''}` },
            { header: 'Data', className: 'mono small', cell: (e) => e.text ?? JSON.stringify(e.data) },
          ]}
        />
      </section>
    </>
  );
}

export function MapPanel({ map, lost }: { map: MapView; lost: number }) {
  const kind = map.display.kind;
  const unit = map.display.unit;
  return (
    <section className="card" aria-labelledby={`map-${map.name}`} data-testid={`map-${map.name}`}>
      <div className="panel-head">
        <h2 id={`map-${map.name}`}>
          @{map.name} <span className="muted small">({kind}{unit ? `, ${unit}` : ''}, {map.targets} target{map.targets === 1 ? '' : 's'})</span>
        </h2>
        <span className="small">
          {lost ? <span className="stale">{formatCount(lost)} events lost before these counts</span> : <span className="muted">no events lost</span>}
          {map.truncated ? <span className="stale"> · {formatCount(map.truncated)} entries left out by agents</span> : null}
        </span>
      </div>
      {map.histograms.length ? (
        map.histograms.slice(0, 6).map((h) => (
          <figure key={h.key} className="chart-figure">
            <figcaption className="small">
              {h.key ? `@${map.name}[${h.key}]` : `@${map.name}`}: count per bucket{unit ? ` (${unit})` : ''}
            </figcaption>
            <BarChart labels={h.buckets.map((b) => b.label)} values={h.buckets.map((b) => b.count)} unit={unit} label={`Histogram of ${map.name}${h.key ? ` for ${h.key}` : ''}`} />
            <details>
              <summary>Buckets as text</summary>
              <DataTable
                noHead
                rows={h.buckets}
                rowKey={(b) => b.label}
                columns={[
                  { header: 'Bucket', rowHeader: true, className: 'mono small', cell: (b) => b.label },
                  { header: 'Count', numeric: true, cell: (b) => formatCount(b.count) },
                ]}
              />
            </details>
          </figure>
        ))
      ) : map.entries.length === 0 ? (
        <p className="muted">Empty so far.</p>
      ) : kind === 'counts' || kind === 'value' ? (
        <figure className="chart-figure">
          <figcaption className="small">
            The {Math.min(20, map.entries.length)} largest of {map.entries.length + map.moreEntries} keys, summed over targets
          </figcaption>
          <BarChart labels={map.entries.slice(0, 20).map((e) => e.key)} values={map.entries.slice(0, 20).map((e) => e.value ?? 0)} unit={unit} label={`Counts of ${map.name} by key`} />
          <details>
            <summary>Every listed key as text</summary>
            <DataTable
              noHead
              rows={map.entries}
              rowKey={(e) => e.key}
              columns={[
                { header: 'Key', rowHeader: true, className: 'mono small', cell: (e) => `@${map.name}[${e.key}]` },
                { header: 'Value', numeric: true, cell: (e) => (e.value === null ? '—' : formatCount(e.value)) },
              ]}
            />
          </details>
        </figure>
      ) : (
        <DataTable
          rows={map.entries}
          rowKey={(e) => e.key}
          columns={[
            { header: 'Key', className: 'mono small', cell: (e) => e.key },
            { header: 'Value', className: 'mono small', cell: (e) => (e.value !== null ? formatCount(e.value) : JSON.stringify(e.raw)) },
          ]}
        />
      )}
      {map.moreEntries ? <p className="muted small">{formatCount(map.moreEntries)} more keys not shown.</p> : null}
    </section>
  );
}
