import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  /** A colour variable of the stylesheet (`--ok`), read when the chart is drawn so light and dark both fit. */
  colorVariable: string;
  values: Array<number | null>;
}

/** The stylesheet's value of a colour variable, for a canvas that cannot read CSS itself. */
function cssColor(variable: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(variable).trim() || '#888';
}

/** Steps between ticks of a count axis: whole numbers only, never 2.5. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1e6, 1e7, 1e8, 1e9];

/**
 * A line chart over time, drawn by uPlot on a canvas. `times` are epoch seconds; each series has a value per
 * time (null for a gap). The legend under it shows each series' value at the cursor, and its total otherwise.
 * With nothing to draw it says so instead of drawing an empty frame.
 */
export function TimeChart({
  label,
  times,
  series,
  height = 180,
  span,
  counts = false,
  empty = 'Nothing was reported in this time.',
  caption = 'total',
  format = (value: number) => String(Math.round(value * 100) / 100),
}: {
  label: string;
  times: number[];
  series: ChartSeries[];
  height?: number;
  /** The time axis from and to (epoch seconds), when it must not shrink to the points there are. */
  span?: [number, number];
  /** The values are counts: the axis starts at 0 and ticks at whole numbers. */
  counts?: boolean;
  /** What shows in place of the chart when no series has a value. */
  empty?: string;
  /** What the caption says of each series: its total (counts), or its latest value (an estimate that settles). */
  caption?: 'total' | 'latest';
  /** A value as the legend and caption write it. */
  format?: (value: number) => string;
}) {
  const container = useRef<HTMLDivElement>(null);
  // Counts that are all zero say as little as no values: either way there was nothing to count.
  const nothing = series.every((entry) => entry.values.every((value) => value === null || (counts && value === 0)));
  useEffect(() => {
    const element = container.current;
    if (!element || nothing) return;
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 320),
        height,
        legend: { live: true },
        scales: {
          x: span ? { time: true, range: () => span } : { time: true },
          ...(counts ? { y: { range: (_chart: uPlot, _min: number, max: number) => [0, Math.max(max, 1)] as uPlot.Range.MinMax } } : {}),
        },
        axes: [
          { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border') } },
          { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border') }, ...(counts ? { incrs: WHOLE_STEPS } : {}) },
        ],
        series: [
          {},
          ...series.map((entry) => ({
            label: entry.label,
            stroke: cssColor(entry.colorVariable),
            width: 2,
            points: { show: times.length < 50 },
            value: (_chart: uPlot, value: number | null) => (value === null ? '—' : format(value)),
          })),
        ],
      },
      [times, ...series.map((entry) => entry.values)],
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 320), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, height, span, counts, nothing, format]);
  return (
    <figure className="chart" aria-label={label}>
      {nothing ? (
        <p className="muted chart-empty" style={{ height }}>
          {empty}
        </p>
      ) : (
        <div ref={container} />
      )}
      <figcaption className="chart-totals">
        {series.map((entry) => (
          <span key={entry.label} data-testid={`total-${entry.label}`}>
            {entry.label}:{' '}
            <strong>
              {caption === 'total'
                ? entry.values.reduce<number>((total, value) => total + (value ?? 0), 0)
                : format(entry.values.findLast((value) => value !== null) ?? Number.NaN)}
            </strong>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
