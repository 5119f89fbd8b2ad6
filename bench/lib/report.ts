import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import type { EngineName } from './engines.js';
import type { Machine } from './machine.js';

/** How a figure is judged against its goal. */
export interface Target {
  op: '<=' | '>=' | '==';
  value: number;
}

/** What a figure is measured against, side by side in the same run. */
export interface Reference {
  /** Short name for the table: "SQLite floor", "bare", "reference client". */
  name: string;
  value: number | null;
  unit: string;
  runs?: number[];
}

/** One measured figure. */
export interface Figure {
  /** Stable key of the figure within its case, e.g. "store.new"; with `engine`, unique. */
  id: string;
  /** The row of issue 16's table it stands for (1 to 11), or null for a figure beyond it. */
  row: number | null;
  caseName: string;
  engine: EngineName | null;
  /** What is measured, with its size. */
  name: string;
  /** Null when the figure could not be measured (see `note`). */
  value: number | null;
  unit: string;
  /** The floor, bare cost or reference client measured beside it. */
  reference?: Reference;
  /**
   * value against reference, as the goal reads it (a rate over the floor's rate, a time over the
   * bare time): the median of the ratios of runs measured side by side (alternating).
   */
  ratio?: number | null;
  ratioRuns?: number[];
  /** Requests in the simulator the figure was measured against, where it plots against size. */
  size?: number;
  /** The goal: on the ratio when there is a reference, else on the value. */
  target?: Target;
  /** pass / fail against the goal; info without one; pending when not measured; error. */
  result: 'pass' | 'fail' | 'info' | 'pending' | 'error';
  /** The single runs the value is the median of. */
  runs?: number[];
  note?: string;
}

/** What a case says it will measure: the figures with a goal, so none goes missing silently. */
export interface FigureSpec {
  id: string;
  row: number | null;
  caseName: string;
  engine: EngineName | null;
  name: string;
  unit: string;
  target?: Target;
  reference?: { name: string; unit: string };
  /** Requests in the simulator the figure was measured against, where it plots against size. */
  size?: number;
}

const roundRuns = (runs: readonly number[]) => runs.map((run) => Math.round(run * 1000) / 1000);

/** pass or fail against `target` (info without one, error when there is no value to judge). */
export function judge(
  value: number | null | undefined,
  target: Target | undefined,
): Figure['result'] {
  if (!target) return 'info';
  if (value === null || value === undefined || !Number.isFinite(value)) return 'error';
  const tolerance = 1e-9;
  const ok =
    target.op === '<='
      ? value <= target.value + tolerance
      : target.op === '>='
        ? value >= target.value - tolerance
        : Math.abs(value - target.value) <= tolerance;
  return ok ? 'pass' : 'fail';
}

/** A measured figure, judged against its goal (on the ratio when it has a reference). */
export function figure(
  spec: FigureSpec,
  value: number,
  options: {
    runs?: readonly number[];
    reference?: { value: number; runs?: readonly number[] };
    ratio?: number;
    ratioRuns?: readonly number[];
    note?: string;
  } = {},
): Figure {
  const reference: Reference | undefined =
    spec.reference && options.reference
      ? {
          ...spec.reference,
          value: options.reference.value,
          ...(options.reference.runs && { runs: roundRuns(options.reference.runs) }),
        }
      : undefined;
  const ratio = options.ratio === undefined ? undefined : Math.round(options.ratio * 100) / 100;
  const { reference: _planned, ...rest } = spec;
  return {
    ...rest,
    value,
    ...(reference && { reference }),
    ...(ratio !== undefined && { ratio }),
    ...(options.ratioRuns && { ratioRuns: roundRuns(options.ratioRuns) }),
    result: judge(ratio !== undefined ? ratio : value, spec.target),
    ...(options.runs && { runs: roundRuns(options.runs) }),
    ...(options.note && { note: options.note }),
  };
}

/** A figure that was not measured, with the reason. */
export function notMeasured(spec: FigureSpec, reason: string, isError = false): Figure {
  const { reference: _planned, ...rest } = spec;
  return {
    ...rest,
    value: null,
    ...(spec.reference && { reference: { ...spec.reference, value: null } }),
    ...(spec.reference && { ratio: null }),
    result: isError ? 'error' : 'pending',
    note: `not measured: ${reason}`,
  };
}

/** A spec builder for one case and engine. */
export function specs(caseName: string, engine: EngineName | null) {
  return (
    id: string,
    row: number | null,
    name: string,
    unit: string,
    extra: { target?: Target; reference?: { name: string; unit: string }; size?: number } = {},
  ): FigureSpec => ({ id, row, caseName, engine, name, unit, ...extra });
}

const ENGINE_LABEL: Record<EngineName, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The engine's name as people write it. */
export function engineLabel(engine: EngineName | null): string {
  return engine ? ENGINE_LABEL[engine] : '';
}

/** A number with its unit, as the table shows it. */
export function formatValue(value: number | null | undefined, unit: string): string {
  if (value === null || value === undefined) return '-';
  if (!Number.isFinite(value)) return String(value);
  if (unit === 'ratio') return value.toFixed(2);
  const abs = Math.abs(value);
  const text =
    Number.isInteger(value) || abs >= 1000
      ? Math.round(value).toLocaleString('en-US')
      : abs >= 100
        ? value.toFixed(0)
        : abs >= 10
          ? value.toFixed(1)
          : value.toFixed(2);
  return unit === '' ? text : `${text} ${unit}`;
}

function formatTarget(target: Target | undefined, unit: string): string {
  if (!target) return '';
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '=';
  return `${op} ${formatValue(target.value, unit)}`;
}

function resultCell(f: Figure): string {
  if (f.result === 'fail') return '**fail**';
  if (f.result === 'error') return '**error**';
  if (f.result === 'pending') return 'not measured';
  return f.result;
}

/** The figures as a Markdown table: value, reference, ratio, goal, pass/fail. */
export function markdownTable(figures: readonly Figure[]): string {
  const rows = [
    '| # | Path | Engine | Value | Reference | Ratio | Goal | Result |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | --- |',
    ...figures.map((f) => {
      const reference = f.reference
        ? `${formatValue(f.reference.value, f.reference.unit)} (${f.reference.name})`
        : '';
      const ratio = f.reference ? formatValue(f.ratio, 'ratio') : '';
      const goalUnit = f.reference ? 'ratio' : f.unit;
      const name = `${f.name}${f.note ? ` (${f.note})` : ''}`.replaceAll('|', '\\|');
      return `| ${f.row ?? ''} | ${name} | ${engineLabel(f.engine)} | ${formatValue(f.value, f.unit)} | ${reference} | ${ratio} | ${formatTarget(f.target, goalUnit)} | ${resultCell(f)} |`;
    }),
  ];
  return rows.join('\n');
}

/**
 * The figures with a goal, one line per figure and size, SQLite and PostgreSQL side by side:
 * the README's short table (docs/performance.md has the whole one).
 */
export function summaryTable(figures: readonly Figure[]): string {
  const lines = new Map<string, { row: number; name: string; cells: Figure[] }>();
  for (const f of figures) {
    if (f.row === null || !f.target) continue;
    const key = `${f.id}@${f.size ?? ''}`;
    const line = lines.get(key) ?? { row: f.row, name: f.name.replaceAll('|', '\\|'), cells: [] };
    line.cells.push(f);
    lines.set(key, line);
  }
  const goalText = (f: Figure) => formatTarget(f.target, f.reference ? 'ratio' : f.unit);
  // One goal when the engines share it; each engine's where they differ (bench/lib/goals.ts).
  const goal = (cells: readonly Figure[]) => {
    const goals = [...new Set(cells.map(goalText))];
    return goals.length === 1
      ? goals[0]!
      : cells.map((f) => `${engineLabel(f.engine)} ${goalText(f)}`).join(', ');
  };
  const cell = (f: Figure | undefined) => {
    if (!f) return '';
    const value = formatValue(f.value, f.unit);
    const shown = f.reference
      ? `${value}, ${formatValue(f.ratio, 'ratio')} of ${f.reference.name}`
      : value;
    return `${shown} (${f.result})`;
  };
  return [
    '| # | Path | SQLite | PostgreSQL | Goal |',
    '| --- | --- | --- | --- | --- |',
    ...[...lines.values()].map(
      (l) =>
        `| ${l.row} | ${l.name} | ${cell(l.cells.find((f) => f.engine === 'sqlite'))} | ${cell(l.cells.find((f) => f.engine === 'postgres'))} | ${goal(l.cells)} |`,
    ),
  ].join('\n');
}

/** What a full run writes to bench/results.json. */
export interface Results {
  date: string;
  machine: Machine;
  durationMs: number;
  options: { quick: boolean; runs: number; cases: string[]; engineNames: EngineName[] };
  figures: Figure[];
  details: Record<string, unknown>;
}

/** One line of the machine, for the table's heading. */
export function machineLine(machine: Machine, date: string): string {
  return `${date.slice(0, 10)}, ${machine.cpuModel}, ${machine.cores} cores, ${Math.round(machine.memoryMb / 1024)} GB, Node ${machine.node}, ${machine.os}; load average at start ${machine.loadAverage.join(' / ')}`;
}

/** Writes JSON through a temporary file, so a crash never leaves half a file. */
export function writeJson(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

/** The markers a generated section sits between: `<!-- bench:<name>:start -->` and `...end -->`. */
const markers = (name: string) => [`<!-- bench:${name}:start -->`, `<!-- bench:${name}:end -->`];

/**
 * Replaces the generated section of a Markdown file (between the bench markers) and formats the
 * file with the project's Prettier settings, so `npm run lint` passes after a run.
 */
export async function replaceSection(
  path: string,
  body: string,
  section = 'results',
): Promise<boolean> {
  const [START, END] = markers(section) as [string, string];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return false;
  }
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  const replaced = `${text.slice(0, start + START.length)}\n${body}\n${text.slice(end)}`;
  const options = (await prettier.resolveConfig(path)) ?? {};
  writeFileSync(path, await prettier.format(replaced, { ...options, filepath: path }));
  return true;
}
