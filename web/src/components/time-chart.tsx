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

/**
 * A line chart over time, drawn by uPlot on a canvas. `times` are epoch seconds; each series has a value per
 * time (null for a gap). The legend under it shows each series' value at the cursor, and its total otherwise.
 */
export function TimeChart({
  label,
  times,
  series,
  height = 180,
  span,
}: {
  label: string;
  times: number[];
  series: ChartSeries[];
  height?: number;
  /** The time axis from and to (epoch seconds), when it must not shrink to the points there are. */
  span?: [number, number];
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 320),
        height,
        legend: { live: true },
        scales: { x: span ? { time: true, range: () => span } : { time: true } },
        axes: [
          { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border') } },
          { stroke: cssColor('--muted'), grid: { stroke: cssColor('--border') } },
        ],
        series: [
          {},
          ...series.map((entry) => ({
            label: entry.label,
            stroke: cssColor(entry.colorVariable),
            width: 2,
            points: { show: times.length < 50 },
            value: (_chart: uPlot, value: number | null) => (value === null ? '—' : String(Math.round(value * 100) / 100)),
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
  }, [times, series, height, span]);
  return (
    <figure className="chart" aria-label={label}>
      <div ref={container} />
      <figcaption className="chart-totals">
        {series.map((entry) => (
          <span key={entry.label} data-testid={`total-${entry.label}`}>
            {entry.label}: <strong>{entry.values.reduce<number>((total, value) => total + (value ?? 0), 0)}</strong>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
