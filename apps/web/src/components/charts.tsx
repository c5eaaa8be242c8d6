'use client';

// The dashboard's panels drawn with uPlot: bars of sorted counts and of histogram buckets (bpftrace's
// `[lo, hi)` labels, computed by packages/runtime in the registry), rates over time, and a heatmap
// of a histogram over time (uPlot's draw hook paints the cells on its own scales).
import { useMemo, useRef } from 'react';
import type uPlotType from 'uplot';
import { type ChartOptions, UPlotChart } from './uplot-chart';

const accent = '#1f5fbf';
const bad = '#b3261e';

function ordinalAxis(labels: string[]): uPlotType.Axis {
  return {
    values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
    splits: () => labels.map((_, i) => i),
    rotate: labels.length > 8 ? -45 : 0,
    size: labels.length > 8 ? 70 : 40,
    gap: 4,
  } as uPlotType.Axis;
}

/** Bars of labelled values (sorted counts, or histogram buckets in slot order). */
export function BarChart({ labels, values, unit, label }: { labels: string[]; values: number[]; unit?: string | undefined; label: string }) {
  const key = `bars:${labels.join('\u0000')}:${unit ?? ''}`;
  const options = useMemo(
    () =>
      (UPlot: typeof uPlotType): ChartOptions => ({
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.05] } },
      axes: [ordinalAxis(labels), { label: unit ? `count (${unit})` : 'count', size: 60 }],
      // uPlot's own bar path builder.
      series: [{}, { label: 'count', fill: `${accent}cc`, stroke: accent, paths: UPlot.paths.bars?.({ size: [0.8, 80], align: 0 }) }],
    }),
    [key],
  );
  const data = useMemo<uPlotType.AlignedData>(() => [labels.map((_, i) => i), values], [labels, values]);
  return <UPlotChart options={options} optionsKey={key} data={data} label={label} />;
}

/** Lines over time (per-second rates); `null` is a gap. */
export function TimeChart({ times, series, label, unit }: { times: number[]; series: { label: string; values: (number | null)[]; color?: string }[]; label: string; unit: string }) {
  const key = `time:${series.map((s) => s.label).join(',')}:${unit}`;
  const options = useMemo<ChartOptions>(
    () => ({
      legend: { show: series.length > 1 },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{}, { label: unit, size: 60 }],
      // Buckets without a snapshot are gaps in the data; the line spans them and each real point is marked.
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color ?? (i === 0 ? accent : bad), width: 2, spanGaps: true, points: { show: true, size: 4 } }))],
    }),
    [key],
  );
  const data = useMemo<uPlotType.AlignedData>(() => [times.map((t) => t / 1000), ...series.map((s) => s.values)], [times, series]);
  return <UPlotChart options={options} optionsKey={key} data={data} label={label} />;
}

/** A histogram over time: one column per time bucket, one row per slot, darker for more. */
export function Heatmap({ times, stepMs, labels, counts, label }: { times: number[]; stepMs: number; labels: string[]; counts: number[][]; label: string }) {
  // Rows with any count, so the chart shows the buckets that matter.
  const rows = useMemo(() => {
    const used: number[] = [];
    for (let s = 0; s < labels.length; s++) if (counts.some((c) => (c[s] ?? 0) > 0)) used.push(s);
    if (used.length === 0) return [] as number[];
    const out: number[] = [];
    for (let s = used[0]!; s <= used.at(-1)!; s++) out.push(s);
    return out;
  }, [labels, counts]);
  const rowLabels = rows.map((s) => labels[s] ?? String(s));
  const key = `heat:${rowLabels.join('\u0000')}:${stepMs}`;
  const state = useMemo(() => ({ counts, rows, stepMs }), [counts, rows, stepMs]);
  const ref = useRef(state);
  ref.current = state;
  const options = useMemo<ChartOptions>(
    () => ({
      legend: { show: false },
      scales: { x: { time: true }, y: { time: false, range: [0, Math.max(1, rowLabels.length)] } },
      axes: [
        {},
        {
          size: 90,
          splits: () => rowLabels.map((_, i) => i + 0.5),
          values: (_u: uPlotType, splits: number[]) => splits.map((v) => rowLabels[Math.floor(v)] ?? ''),
        } as uPlotType.Axis,
      ],
      series: [{}, { label: 'count', stroke: 'transparent', points: { show: false } }],
      hooks: {
        draw: [
          (u: uPlotType) => {
            const { counts: c, rows: r, stepMs: step } = ref.current;
            let max = 0;
            for (const col of c) for (const s of r) max = Math.max(max, col[s] ?? 0);
            if (max === 0) return;
            const ctx = u.ctx;
            ctx.save();
            const xs = u.data[0];
            for (let i = 0; i < xs.length; i++) {
              const x0 = u.valToPos(xs[i]!, 'x', true);
              const x1 = u.valToPos(xs[i]! + step / 1000, 'x', true);
              r.forEach((s, row) => {
                const n = c[i]?.[s] ?? 0;
                if (n <= 0) return;
                const y0 = u.valToPos(row + 1, 'y', true);
                const y1 = u.valToPos(row, 'y', true);
                ctx.fillStyle = `rgba(31, 95, 191, ${0.15 + 0.85 * (Math.log1p(n) / Math.log1p(max))})`;
                ctx.fillRect(x0, y0, Math.max(1, x1 - x0 - 1), Math.max(1, y1 - y0 - 1));
              });
            }
            ctx.restore();
          },
        ],
      },
    }),
    [key],
  );
  const data = useMemo<uPlotType.AlignedData>(() => [times.map((t) => t / 1000), times.map(() => null)], [times]);
  if (rows.length === 0) return <p className="muted small">No samples in this range yet.</p>;
  return <UPlotChart options={options} optionsKey={key} data={data} label={label} height={Math.min(360, 60 + rows.length * 18)} />;
}
