import type { Child } from "hono/jsx";

/**
 * Server-drawn SVG charts for the monitoring page: a band of when a compute was active, and step
 * charts of a metric sampled per minute. No script, no chart library: a few hundred bytes each.
 */

const WIDTH = 720;
const HEIGHT = 120;
const LEFT = 56;
const BOTTOM = 20;
const PLOT_W = WIDTH - LEFT - 8;
const PLOT_H = HEIGHT - BOTTOM - 8;
/** Buckets across the plot: one per two pixels. */
const BUCKETS = PLOT_W / 2;

interface Sample {
  minute: number;
  peak: number;
  last: number;
}

/**
 * The highest value in each of `buckets` equal slices of [from, to): a value holds from its sample
 * until the next one (the first, from before the window, opens it).
 */
export function bucketPeaks(
  samples: Sample[],
  from: number,
  to: number,
  buckets = BUCKETS,
): (number | null)[] {
  const width = (to - from) / buckets;
  const out: (number | null)[] = [];
  let i = 0;
  let carry: number | null = null;
  while (i < samples.length && (samples[i] as Sample).minute < from) carry = (samples[i++] as Sample).last;
  for (let b = 0; b < buckets; b++) {
    const end = from + (b + 1) * width;
    let peak = carry;
    while (i < samples.length && (samples[i] as Sample).minute < end) {
      const s = samples[i++] as Sample;
      peak = Math.max(peak ?? 0, s.peak);
      carry = s.last;
    }
    out.push(peak);
  }
  return out;
}

const x = (fraction: number) => LEFT + fraction * PLOT_W;
const time = (ms: number) => new Date(ms).toISOString().slice(5, 16).replace("T", " ");

function Axis(props: { from: number; to: number }) {
  return (
    <>
      <line x1={LEFT} y1={8 + PLOT_H} x2={LEFT + PLOT_W} y2={8 + PLOT_H} stroke="#dadce0" />
      <text x={LEFT} y={HEIGHT - 4} font-size="10" fill="#5f6368">
        {time(props.from)}
      </text>
      <text x={LEFT + PLOT_W} y={HEIGHT - 4} font-size="10" fill="#5f6368" text-anchor="end">
        {time(props.to)} UTC
      </text>
    </>
  );
}

/** A chart's frame: the SVG with its accessible name, and the caption under it. */
function Chart(props: { title: string; caption?: string; children: Child }) {
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={props.title}
      >
        <title>{props.title}</title>
        {props.children}
      </svg>
      <figcaption>{props.caption ?? props.title}</figcaption>
    </figure>
  );
}

/** Green where the compute was active; grey where it was idle or stopped. */
export function StateChart(props: {
  title: string;
  from: number;
  to: number;
  active: { start: number; end: number }[];
}) {
  const span = props.to - props.from;
  return (
    <Chart title={props.title}>
      <rect x={LEFT} y={8} width={PLOT_W} height={PLOT_H} fill="#e8eaed" />
      {props.active.map((a) => (
        <rect
          x={x((a.start - props.from) / span)}
          y={8}
          width={Math.max(1, ((a.end - a.start) / span) * PLOT_W)}
          height={PLOT_H}
          fill="#34a853"
        />
      ))}
      <text x={4} y={24} font-size="10" fill="#0d652d">
        Active
      </text>
      <text x={4} y={40} font-size="10" fill="#5f6368">
        Idle
      </text>
      <Axis from={props.from} to={props.to} />
    </Chart>
  );
}

/** A step chart of per-minute peaks; gaps where nothing was recorded yet. */
export function StepChart(props: {
  title: string;
  from: number;
  to: number;
  samples: Sample[];
  format: (n: number) => string;
}) {
  const peaks = bucketPeaks(props.samples, props.from, props.to);
  const top = Math.max(1, ...peaks.map((p) => p ?? 0));
  const y = (v: number) => 8 + PLOT_H - (v / top) * PLOT_H;
  const step = PLOT_W / peaks.length;
  let d = "";
  peaks.forEach((p, i) => {
    if (p === null) return;
    const move = i === 0 || peaks[i - 1] === null ? "M" : "L";
    d += `${move}${(LEFT + i * step).toFixed(1)},${y(p).toFixed(1)}H${(LEFT + (i + 1) * step).toFixed(1)}`;
  });
  return (
    <Chart title={props.title} caption={`${props.title}${d ? "" : " (nothing recorded in this window)"}`}>
      <text x={LEFT - 4} y={14} font-size="10" fill="#5f6368" text-anchor="end">
        {props.format(top)}
      </text>
      <text x={LEFT - 4} y={8 + PLOT_H} font-size="10" fill="#5f6368" text-anchor="end">
        0
      </text>
      <line x1={LEFT} y1={8} x2={LEFT} y2={8 + PLOT_H} stroke="#dadce0" />
      {d && <path d={d} fill="none" stroke="#1a73e8" stroke-width="1.5" />}
      <Axis from={props.from} to={props.to} />
    </Chart>
  );
}
