/**
 * Draws the bench's two plots from bench/results.json as hand-written SVG (no dependency, no
 * network), into bench/plots/:
 *
 * - rate.svg: requests per second against requests in the simulator (log scale): the backfill
 *   and the bare fetch + parse of the same calls at 10,000 and 100,000, and the store's batched
 *   write paths beside their floor, for each engine.
 * - rss.svg: the backfill's peak RSS against requests, for each engine, with the goal, and at
 *   the large size inside a memory cgroup as the units run it.
 *
 *   node dist-bench/bench/plot.js [results.json] [out-dir]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './lib/paths.js';
import type { Figure, Results } from './lib/report.js';

interface Point {
  x: number;
  y: number;
}

interface Series {
  label: string;
  color: string;
  dash?: string;
  marker: 'circle' | 'square' | 'triangle' | 'diamond';
  points: Point[];
  /** Points only, no line between them. */
  isScatter?: boolean;
}

interface Chart {
  title: string;
  subtitle: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  lines?: { y: number; label: string }[];
}

const COLORS = { sqlite: '#1f6fb4', postgres: '#d2691e' } as const;
const LABELS = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;
const WIDTH = 760;
const HEIGHT = 440;
const MARGIN = { left: 78, right: 250, top: 58, bottom: 58 };

const escape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

const number = (value: number) =>
  value >= 1000 ? value.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(value);

/** A round step for about `count` ticks up to `max`. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= raw)!;
  return step * power;
}

function marker(kind: Series['marker'], x: number, y: number, color: string): string {
  const r = 4.5;
  const style = `fill="${color}" stroke="white" stroke-width="1"`;
  switch (kind) {
    case 'circle':
      return `<circle cx="${x}" cy="${y}" r="${r}" ${style}/>`;
    case 'square':
      return `<rect x="${x - r}" y="${y - r}" width="${2 * r}" height="${2 * r}" ${style}/>`;
    case 'triangle':
      return `<path d="M${x},${y - r - 1} L${x + r + 1},${y + r} L${x - r - 1},${y + r} Z" ${style}/>`;
    case 'diamond':
      return `<path d="M${x},${y - r - 1} L${x + r + 1},${y} L${x},${y + r + 1} L${x - r - 1},${y} Z" ${style}/>`;
  }
}

/** A chart with a logarithmic x axis (requests) and a linear y axis from 0. */
export function drawChart(chart: Chart): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const points = chart.series.flatMap((s) => s.points);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="16" font-weight="bold">${escape(chart.title)}</text>`,
    `<text x="${MARGIN.left}" y="42" fill="#555">${escape(chart.subtitle)}</text>`,
  ];
  if (points.length === 0) {
    out.push(
      `<text x="${MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH / 2}" text-anchor="middle" fill="#888">no figures in results.json</text>`,
      '</svg>',
    );
    return `${out.join('\n')}\n`;
  }
  const xs = points.map((p) => p.x);
  const lo = Math.log10(Math.min(...xs)) - 0.3;
  const hi = Math.log10(Math.max(...xs)) + 0.3;
  const yMaxData = Math.max(...points.map((p) => p.y), ...(chart.lines ?? []).map((l) => l.y));
  const step = niceStep(yMaxData * 1.08, 5);
  const yMax = Math.ceil((yMaxData * 1.08) / step) * step;
  const sx = (x: number) => MARGIN.left + ((Math.log10(x) - lo) / (hi - lo)) * plotW;
  const sy = (y: number) => MARGIN.top + plotH - (y / yMax) * plotH;
  const r1 = (v: number) => Math.round(v * 10) / 10;

  // Grid and axes.
  for (let y = 0; y <= yMax + 1e-9; y += step) {
    out.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${r1(sy(y))}" y2="${r1(sy(y))}" stroke="#e4e4e4"/>`,
      `<text x="${MARGIN.left - 8}" y="${r1(sy(y)) + 4}" text-anchor="end" fill="#444">${number(y)}</text>`,
    );
  }
  const ticks = [...new Set(xs)].sort((a, b) => a - b);
  for (const x of ticks) {
    out.push(
      `<line x1="${r1(sx(x))}" x2="${r1(sx(x))}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#f0f0f0"/>`,
      `<text x="${r1(sx(x))}" y="${MARGIN.top + plotH + 18}" text-anchor="middle" fill="#444">${number(x)}</text>`,
    );
  }
  out.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}</text>`,
  );
  for (const line of chart.lines ?? []) {
    out.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${r1(sy(line.y))}" y2="${r1(sy(line.y))}" stroke="#c00" stroke-dasharray="6 4"/>`,
      `<text x="${MARGIN.left + plotW - 4}" y="${r1(sy(line.y)) - 5}" text-anchor="end" fill="#c00">${escape(line.label)}</text>`,
    );
  }
  // Series, then the legend.
  chart.series.forEach((series, index) => {
    const sorted = [...series.points].sort((a, b) => a.x - b.x);
    if (sorted.length > 1 && !series.isScatter) {
      const d = sorted.map((p, i) => `${i === 0 ? 'M' : 'L'}${r1(sx(p.x))},${r1(sy(p.y))}`);
      out.push(
        `<path d="${d.join(' ')}" fill="none" stroke="${series.color}" stroke-width="2"${series.dash ? ` stroke-dasharray="${series.dash}"` : ''}/>`,
      );
    }
    for (const p of sorted) out.push(marker(series.marker, r1(sx(p.x)), r1(sy(p.y)), series.color));
    const ly = MARGIN.top + 8 + index * 20;
    const lx = MARGIN.left + plotW + 18;
    out.push(
      series.isScatter
        ? ''
        : `<line x1="${lx}" x2="${lx + 26}" y1="${ly}" y2="${ly}" stroke="${series.color}" stroke-width="2"${series.dash ? ` stroke-dasharray="${series.dash}"` : ''}/>`,
      marker(series.marker, lx + 13, ly, series.color),
      `<text x="${lx + 34}" y="${ly + 4}">${escape(series.label)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

const measured = (f: Figure) => f.value !== null && f.size !== undefined;

/** The rate and RSS charts of a run's figures. */
export function chartsOf(results: Results): { rate: Chart; rss: Chart } {
  const figures = results.figures.filter(measured);
  const subtitle = `npm run bench, ${results.date.slice(0, 10)}, ${results.machine.cpuModel}, ${results.machine.cores} cores${results.options.quick ? ' (--quick)' : ''}`;
  const rate: Series[] = [];
  const rss: Series[] = [];
  for (const engine of ['sqlite', 'postgres'] as const) {
    const color = COLORS[engine];
    const of = (id: string) => figures.filter((f) => f.engine === engine && f.id === id);
    const backfill = of('backfill.rate');
    if (backfill.length > 0) {
      rate.push(
        {
          label: `backfill, ${LABELS[engine]}`,
          color,
          marker: 'circle',
          points: backfill.map((f) => ({ x: f.size!, y: f.value! })),
        },
        {
          label: `bare fetch + parse, ${LABELS[engine]} run`,
          color,
          dash: '5 4',
          marker: 'diamond',
          points: backfill
            .filter((f) => f.reference?.value != null)
            .map((f) => ({ x: f.size!, y: f.reference!.value! })),
        },
      );
    }
    const store = of('store.new');
    if (store.length > 0) {
      rate.push(
        {
          label: `store, new batched, ${LABELS[engine]}`,
          color,
          marker: 'square',
          isScatter: true,
          points: store.map((f) => ({ x: f.size!, y: f.value! })),
        },
        {
          label: `store floor, ${LABELS[engine]}`,
          color,
          marker: 'triangle',
          isScatter: true,
          points: store
            .filter((f) => f.reference?.value != null)
            .map((f) => ({ x: f.size!, y: f.reference!.value! })),
        },
      );
    }
    const peaks = of('backfill.rss');
    if (peaks.length > 0) {
      rss.push({
        label: `backfill peak RSS, ${LABELS[engine]}`,
        color,
        marker: 'circle',
        points: peaks.map((f) => ({ x: f.size!, y: f.value! })),
      });
    }
    const limited = of('backfill.rss.cgroup').filter((f) => f.value !== null);
    if (limited.length > 0) {
      rss.push({
        label: `in a 1 GiB memory cgroup (the units' MemoryMax), ${LABELS[engine]}`,
        color,
        marker: 'diamond',
        isScatter: true,
        points: limited.map((f) => ({ x: f.size!, y: f.value! })),
      });
    }
  }
  return {
    rate: {
      title: 'Rate against requests',
      subtitle,
      xLabel: 'requests in the simulator (log scale)',
      yLabel: 'requests per second',
      series: rate,
    },
    rss: {
      title: 'Peak RSS of the backfill against requests',
      subtitle: `${subtitle}; default flags, with and without a memory limit`,
      xLabel: 'requests in the simulator (log scale)',
      yLabel: 'peak RSS (MB)',
      series: rss,
      lines: [{ y: 160, label: 'goal: 160 MB' }],
    },
  };
}

/** Writes rate.svg and rss.svg into `dir`. */
export function drawPlots(results: Results, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const charts = chartsOf(results);
  writeFileSync(join(dir, 'rate.svg'), drawChart(charts.rate));
  writeFileSync(join(dir, 'rss.svg'), drawChart(charts.rss));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = repoRoot();
  const file = process.argv[2] ?? join(root, 'bench', 'results.json');
  const dir = process.argv[3] ?? join(root, 'bench', 'plots');
  drawPlots(JSON.parse(readFileSync(file, 'utf8')) as Results, dir);
  process.stdout.write(`wrote ${join(dir, 'rate.svg')} and ${join(dir, 'rss.svg')}\n`);
}
