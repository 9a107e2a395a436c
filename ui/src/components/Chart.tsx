import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { axisTime, formatTime } from "../lib/format";

/** One line of a chart. */
export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** A CSS colour (the series colours are read from the theme's custom properties). */
  color: string;
  dash?: number[];
}

/**
 * A time chart drawn by uPlot: `times` in seconds since the epoch, one or more series, in the
 * person's time zone. The canvas is described for assistive technology by `summary` (it cannot
 * read the lines).
 */
export function Chart({
  title,
  summary,
  times,
  series,
  height = 180,
}: {
  title: string;
  summary: string;
  times: number[];
  series: ChartSeries[];
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColorScheme();
  const [width, setWidth] = useState(0);
  // The time range a drag zoomed into (seconds), said in the caption; none when it shows all.
  const [zoom, setZoom] = useState<{ from: number; to: number } | null>(null);
  const plotRef = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.floor(entry.contentRect.width));
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, []);

  useEffect(() => {
    const element = box.current;
    if (!element || width === 0) return;
    const style = getComputedStyle(element);
    const read = (name: string) => style.getPropertyValue(name).trim() || "currentColor";
    const axis = {
      stroke: read("--muted"),
      grid: { stroke: read("--border"), width: 1 },
      ticks: { stroke: read("--border"), width: 1 },
    };
    const plot = new uPlot(
      {
        width,
        height,
        legend: { live: true },
        // Drag across the chart to zoom into that time (double-click zooms out), as in Grafana;
        // a series is hidden or shown by clicking its name in the legend.
        cursor: { drag: { x: true, y: false, setScale: true } },
        scales: { x: { time: true } },
        hooks: {
          setScale: [
            (u: uPlot, key: string) => {
              if (key !== "x") return;
              const { min, max } = u.scales.x ?? {};
              const whole = min === times[0] && max === times.at(-1);
              setZoom(min == null || max == null || whole ? null : { from: min, to: max });
            },
          ],
        },
        axes: [
          {
            ...axis,
            // ISO dates and a 24-hour clock, as everywhere else in the app.
            values: (_: uPlot, splits: number[]) => {
              const span = (times.at(-1) ?? 0) - (times[0] ?? 0);
              return splits.map((t) => axisTime(t, span));
            },
          },
          { ...axis, size: 48 },
        ],
        series: [
          {
            label: "Time",
            value: (_: uPlot, t: number | null) => (t == null ? "–" : formatTime(t * 1_000_000)),
          },
          ...series.map((s) => ({
            label: s.label,
            stroke: read(s.color),
            width: 1.6,
            dash: s.dash,
            spanGaps: false,
            // Shown, so a bucket with data between empty ones is still seen.
            points: { show: true, size: 4, fill: read(s.color) },
          })),
        ],
      },
      [times, ...series.map((s) => s.values)],
      element,
    );
    plotRef.current = plot;
    return () => {
      plotRef.current = null;
      plot.destroy();
    };
  }, [width, height, times, series, scheme]);

  return (
    <figure className="chart card">
      <figcaption className="row">
        <span>{title}</span>
        {zoom && (
          <>
            <span className="muted" role="status">
              zoomed to {formatTime(zoom.from * 1_000_000)} – {formatTime(zoom.to * 1_000_000)}
            </span>
            <button
              type="button"
              className="ghost"
              onClick={() => {
                const plot = plotRef.current;
                const [first, last] = [times[0], times.at(-1)];
                if (plot && first !== undefined && last !== undefined)
                  plot.setScale("x", { min: first, max: last });
              }}
            >
              Show all
            </button>
          </>
        )}
      </figcaption>
      <div
        ref={box}
        role="img"
        aria-label={`${title}: ${summary}`}
        style={{ minHeight: height + 40 }}
      />
    </figure>
  );
}

/** `light` or `dark`, as the page is drawn now (the theme choice or the system's). */
function useColorScheme(): string {
  const read = () =>
    document.documentElement.getAttribute("data-theme") ??
    (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  const [scheme, setScheme] = useState(read);
  useEffect(() => {
    const update = () => {
      setScheme(read());
    };
    const media = matchMedia("(prefers-color-scheme: dark)");
    media.addEventListener("change", update);
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
    return () => {
      media.removeEventListener("change", update);
      observer.disconnect();
    };
  }, []);
  return scheme;
}
