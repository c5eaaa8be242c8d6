// biome-ignore-all lint/a11y/useSemanticElements: an ARIA grid of divs (a <table> cannot be virtualized in two directions)
// biome-ignore-all lint/a11y/useFocusableInteractive: a grid is one tab stop; only its active cell is focusable (roving tabindex)
// biome-ignore-all lint/a11y/useKeyWithClickEvents: the grid handles the keyboard for every cell (arrows, Enter, Space)
'use client';

// The compatibility matrix: versions × kernel profiles, each cell the verdict in words and colour.
// Rows and columns are virtualized (200 × 100 renders a screenful of cells, not 20,000), the grid is
// one tab stop with arrow-key movement (WAI-ARIA grid), and a cell opens its reasons and field diff
// below; the open cell is in the URL, so it can be shared. While compat jobs run it refreshes.
import type { AppRouter } from '@probeyard/registry';
import { useQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTRPC } from '../lib/trpc';
import { CellDetails } from './compat-cell';

type Grid = inferRouterOutputs<AppRouter>['compat']['grid'];
type GridInput = NonNullable<inferRouterInputs<AppRouter>['compat']['grid']>;

const letterVerdict: Record<string, string> = { c: 'compatible', r: 'relocated', i: 'incompatible', u: 'unknown', '.': 'pending' };
/** The cell's visible word: the verdict itself (the accessible name starts with it too). */
const letterWord: Record<string, string> = { c: 'compatible', r: 'relocated', i: 'incompatible', u: 'unknown', '.': 'computing' };

const labelWidth = 220;
const colWidth = 104;
const rowHeight = 30;
const headerHeight = 64;

export function CompatMatrix({ initial, input, initialCell }: { initial: Grid; input: GridInput; initialCell: { versionId: string; profileId: string } | null }) {
  const trpc = useTRPC();
  const grid = useQuery({
    ...trpc.compat.grid.queryOptions(input),
    initialData: initial,
    refetchInterval: (q) => (q.state.data && q.state.data.pendingJobs > 0 ? 1500 : false),
  });
  const data = grid.data ?? initial;
  const rows = data.versions.length;
  const cols = data.profiles.length;
  const scrollRef = useRef<HTMLDivElement>(null);
  const rowV = useVirtualizer({ count: rows, getScrollElement: () => scrollRef.current, estimateSize: () => rowHeight, overscan: 8, scrollPaddingStart: headerHeight });
  const colV = useVirtualizer({ horizontal: true, count: cols, getScrollElement: () => scrollRef.current, estimateSize: () => colWidth, overscan: 4, scrollPaddingStart: labelWidth });
  const startRow = initialCell ? Math.max(0, data.versions.findIndex((v) => v.id === initialCell.versionId)) : 0;
  const startCol = initialCell ? Math.max(0, data.profiles.findIndex((p) => p.id === initialCell.profileId)) : 0;
  const [active, setActive] = useState<[number, number]>([startRow, startCol]);
  const [open, setOpen] = useState(initialCell);
  const focusAfterMove = useRef(false);

  const openCell = useCallback(
    (r: number, c: number) => {
      const v = data.versions[r];
      const p = data.profiles[c];
      if (!v || !p) return;
      setActive([r, c]);
      setOpen({ versionId: v.id, profileId: p.id });
      const url = new URL(window.location.href);
      url.searchParams.set('cell', `${v.id}:${p.id}`);
      window.history.replaceState(null, '', url);
    },
    [data],
  );

  useEffect(() => {
    if (!focusAfterMove.current) return;
    // The target cell exists once the virtualizer has rendered the scrolled-to window (maybe a render later).
    const el = scrollRef.current?.querySelector<HTMLElement>(`[data-cell="${active[0]}:${active[1]}"]`);
    if (!el) return;
    focusAfterMove.current = false;
    el.focus({ preventScroll: true });
  });

  function onKeyDown(e: React.KeyboardEvent) {
    if (!rows || !cols) return;
    let [r, c] = active;
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / rowHeight) - 3);
    switch (e.key) {
      case 'ArrowDown':
        r = Math.min(rows - 1, r + 1);
        break;
      case 'ArrowUp':
        r = Math.max(0, r - 1);
        break;
      case 'ArrowRight':
        c = Math.min(cols - 1, c + 1);
        break;
      case 'ArrowLeft':
        c = Math.max(0, c - 1);
        break;
      case 'PageDown':
        r = Math.min(rows - 1, r + page);
        break;
      case 'PageUp':
        r = Math.max(0, r - page);
        break;
      case 'Home':
        c = 0;
        if (e.ctrlKey) r = 0;
        break;
      case 'End':
        c = cols - 1;
        if (e.ctrlKey) r = rows - 1;
        break;
      case 'Enter':
      case ' ':
        e.preventDefault();
        openCell(r, c);
        return;
      default:
        return;
    }
    e.preventDefault();
    setActive([r, c]);
    rowV.scrollToIndex(r);
    colV.scrollToIndex(c);
    focusAfterMove.current = true;
  }

  if (rows === 0 || cols === 0) {
    return (
      <p className="empty" data-testid="matrix-empty">
        {rows === 0
          ? 'No program versions match. Publish a program (Programs page) or clear the filters.'
          : 'No kernel profiles match. Upload one (Kernels page, an events/ tree or a trace.dat), let an agent enroll, or clear the filters.'}
      </p>
    );
  }
  const counts = { c: 0, r: 0, i: 0, u: 0, '.': 0 } as Record<string, number>;
  for (const row of data.verdicts) for (const ch of row) counts[ch] = (counts[ch] ?? 0) + 1;
  const totalWidth = labelWidth + colV.getTotalSize();
  return (
    <>
      <p className="matrix-summary" aria-live="polite">
        <span className="verdict v-compatible">{counts.c} compatible</span> <span className="verdict v-relocated">{counts.r} relocated</span>{' '}
        <span className="verdict v-incompatible">{counts.i} incompatible</span> <span className="verdict v-unknown">{counts.u} unknown</span>{' '}
        {counts['.'] ? <span className="verdict v-pending">{counts['.']} computing</span> : null}
        {data.pendingJobs > 0 ? <span className="muted small"> · {data.pendingJobs} compat job(s) running, refreshing…</span> : null}
      </p>
      <p className="muted small" id="matrix-help">
        {rows} versions × {cols} kernels. Arrow keys move, Enter opens a cell&apos;s reasons and field diff.
      </p>
      <div
        ref={scrollRef}
        className="matrix-scroll"
        role="grid"
        aria-label="Compatibility: program versions by kernel profile"
        aria-describedby="matrix-help"
        aria-rowcount={rows + 1}
        aria-colcount={cols + 1}
        onKeyDown={onKeyDown}
        data-testid="matrix"
      >
        <div style={{ position: 'relative', width: totalWidth, height: headerHeight + rowV.getTotalSize() }}>
          <div role="row" aria-rowindex={1} className="matrix-header" style={{ width: totalWidth, height: headerHeight }}>
            <div role="columnheader" aria-colindex={1} className="matrix-corner" style={{ width: labelWidth, height: headerHeight }}>
              version \ kernel
            </div>
            {colV.getVirtualItems().map((col) => {
              const p = data.profiles[col.index]!;
              return (
                <div
                  key={p.id}
                  role="columnheader"
                  aria-colindex={col.index + 2}
                  className="matrix-colhead"
                  title={`${p.name}: ${p.release || 'release unknown'} ${p.machine}, ${p.complete ? 'complete profile' : 'partial profile: a missing event is unknown here'}`}
                  style={{ left: labelWidth + col.start, width: colWidth, height: headerHeight }}
                >
                  <span className="matrix-colname">{p.name}</span>
                  <span className="muted small">
                    {p.machine || '—'}
                    {p.complete ? null : <span data-testid="partial-profile"> · partial</span>}
                  </span>
                </div>
              );
            })}
          </div>
          {rowV.getVirtualItems().map((row) => {
            const v = data.versions[row.index]!;
            const letters = data.verdicts[row.index] ?? '';
            return (
              <div key={v.id} role="row" aria-rowindex={row.index + 2} className="matrix-row" style={{ top: headerHeight + row.start, width: totalWidth, height: rowHeight }}>
                <div role="rowheader" aria-colindex={1} className="matrix-rowhead" style={{ width: labelWidth, height: rowHeight }} title={`${v.program}@${v.version}`}>
                  {v.program}@{v.version}
                  {v.yanked ? <span className="badge badge-yanked"> yanked</span> : null}
                </div>
                {colV.getVirtualItems().map((col) => {
                  const ch = letters[col.index] ?? '.';
                  const p = data.profiles[col.index]!;
                  const isActive = active[0] === row.index && active[1] === col.index;
                  const isOpen = open?.versionId === v.id && open.profileId === p.id;
                  return (
                    <div
                      key={p.id}
                      role="gridcell"
                      aria-colindex={col.index + 2}
                      aria-selected={isOpen}
                      aria-label={`${letterWord[ch]}: ${v.program}@${v.version} on ${p.name}`}
                      tabIndex={isActive ? 0 : -1}
                      data-cell={`${row.index}:${col.index}`}
                      className={`matrix-cell verdict v-${letterVerdict[ch]}${isOpen ? ' open' : ''}`}
                      style={{ left: labelWidth + col.start, width: colWidth - 4, height: rowHeight - 4 }}
                      onClick={() => openCell(row.index, col.index)}
                      onFocus={() => setActive([row.index, col.index])}
                    >
                      {letterWord[ch]}
                    </div>
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
      {open ? <CellDetails versionId={open.versionId} profileId={open.profileId} onClose={() => setOpen(null)} /> : null}
    </>
  );
}
