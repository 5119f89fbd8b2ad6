import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import type { Machine } from './machine.js';

/** How a figure is judged against its target. */
export interface Target {
  op: '<=' | '>=' | '==';
  value: number;
}

/** One measured figure; `target` absent means it is reported for information. */
export interface Figure {
  /** The case of issue 8, e.g. "1 idle cycle". */
  caseName: string;
  name: string;
  /** Null when the figure could not be measured (pending, or the case failed). */
  value: number | null;
  unit: string;
  target?: Target;
  /** pass / fail against the target; info without one; pending when not measured yet. */
  result: 'pass' | 'fail' | 'info' | 'pending' | 'error';
  /** The single runs the value is the median of, when it is one. */
  runs?: number[];
  note?: string;
}

/** A figure judged against its target. */
export function figure(
  caseName: string,
  name: string,
  value: number,
  unit: string,
  options: { target?: Target; runs?: number[]; note?: string } = {},
): Figure {
  const { target } = options;
  let result: Figure['result'] = 'info';
  if (target) {
    const tolerance = 1e-9;
    const ok =
      target.op === '<='
        ? value <= target.value + tolerance
        : target.op === '>='
          ? value >= target.value - tolerance
          : Math.abs(value - target.value) <= tolerance;
    result = ok ? 'pass' : 'fail';
  }
  return {
    caseName,
    name,
    value,
    unit,
    ...(target && { target }),
    result,
    ...(options.runs && { runs: options.runs.map((run) => Math.round(run * 1000) / 1000) }),
    ...(options.note && { note: options.note }),
  };
}

/** A figure that is not measured (yet), with the reason. */
export function pendingFigure(
  caseName: string,
  name: string,
  unit: string,
  note: string,
  target?: Target,
  result: 'pending' | 'error' = 'pending',
): Figure {
  return { caseName, name, value: null, unit, ...(target && { target }), result, note };
}

function formatValue(value: number | null, unit: string): string {
  if (value === null) return '-';
  const abs = Math.abs(value);
  if (unit === 'ratio') return value.toFixed(2);
  const text =
    Number.isInteger(value) || abs >= 1000
      ? Math.round(value).toLocaleString('en-US')
      : abs >= 100
        ? value.toFixed(0)
        : abs >= 10
          ? value.toFixed(1)
          : value.toFixed(2);
  return unit === 'ratio' || unit === '' ? text : `${text} ${unit}`;
}

function formatTarget(target: Target | undefined, unit: string): string {
  if (!target) return '';
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '=';
  return `${op} ${formatValue(target.value, unit)}`;
}

/** The figures as a Markdown table. */
export function markdownTable(figures: readonly Figure[]): string {
  const rows = [
    '| Case | Figure | Value | Target | Result |',
    '| --- | --- | ---: | ---: | --- |',
    ...figures.map(
      (f) =>
        `| ${f.caseName} | ${f.name}${f.note ? ` (${f.note})` : ''} | ${formatValue(f.value, f.unit)} | ${formatTarget(f.target, f.unit)} | ${f.result === 'fail' ? '**fail**' : f.result} |`,
    ),
  ];
  return rows.join('\n');
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

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/**
 * Replaces the generated section of a Markdown file (between the bench markers) and formats the
 * file with the project's Prettier settings, so `npm run lint` passes after a run.
 */
export async function replaceSection(path: string, body: string): Promise<boolean> {
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
