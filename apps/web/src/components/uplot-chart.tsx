'use client';

// uPlot in React: made once per chart (the library is loaded on the first chart, so pages without
// charts never download it), fed new data with setData (no re-creation at 10 updates a second),
// and sized to its container.
import { useEffect, useRef } from 'react';
import type uPlotType from 'uplot';
import 'uplot/dist/uPlot.min.css';

export type ChartOptions = Omit<uPlotType.Options, 'width' | 'height'>;

let loading: Promise<typeof uPlotType> | undefined;
function loadUPlot(): Promise<typeof uPlotType> {
  loading ??= import('uplot').then((m) => m.default);
  return loading;
}

/** A chart; `options` are read when it is made (change `optionsKey` to remake it), `data` on every render. */
export function UPlotChart({ options, optionsKey, data, height = 220, label }: { options: ChartOptions | ((UPlot: typeof uPlotType) => ChartOptions); optionsKey: string; data: uPlotType.AlignedData; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlotType | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    loadUPlot().then((UPlot) => {
      if (cancelled || !box.current) return;
      const width = Math.max(200, box.current.clientWidth);
      const opts = typeof options === 'function' ? options(UPlot) : options;
      chart.current = new UPlot({ ...opts, width, height }, latest.current, box.current);
      observer = new ResizeObserver(() => {
        if (box.current && chart.current) chart.current.setSize({ width: Math.max(200, box.current.clientWidth), height });
      });
      observer.observe(box.current);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart.current?.destroy();
      chart.current = null;
    };
  }, [optionsKey, height]);

  useEffect(() => {
    chart.current?.setData(data);
  }, [data]);

  return <div ref={box} className="chart" role="img" aria-label={label} style={{ minHeight: height }} />;
}
