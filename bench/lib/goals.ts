import type { EngineName } from './engines.js';
import { judge, type Figure, type Target } from './report.js';

/*
 * The goals the table judges its ratio rows by: issue 22's, one per engine. Issue 16's table,
 * which the bench was first written for, gave each row one goal for both engines: rows 1 and 2 at
 * least 0.90 of the floor, 3 to 5 at least 0.80, 6 at most 1.2 of bare, 7 at most 1.0 of the
 * reference client, 9 at most 2.0. Issue 22 keeps those for SQLite but row 9 (1.5), and sets
 * PostgreSQL's apart, where every statement is a round trip. Peak RSS (rows 8 and 11), settling
 * (row 10) and the call counts keep the goals their cases give them.
 */

const atLeast = (value: number): Target => ({ op: '>=', value });
const atMost = (value: number): Target => ({ op: '<=', value });

/** Each goal by the id of the figure it judges (the rows of the issues' tables in comments). */
export const ENGINE_GOALS: Readonly<Record<string, Readonly<Record<EngineName, Target>>>> = {
  'store.new': { sqlite: atLeast(0.9), postgres: atLeast(0.8) }, // row 1
  'store.changed': { sqlite: atLeast(0.9), postgres: atLeast(0.8) }, // row 2
  'store.poll': { sqlite: atLeast(0.8), postgres: atLeast(0.7) }, // row 3
  'store.webhooks': { sqlite: atLeast(0.8), postgres: atLeast(0.7) }, // row 4
  'backfill.rate': { sqlite: atLeast(0.8), postgres: atLeast(0.6) }, // row 5
  'poll.idle': { sqlite: atMost(1.2), postgres: atMost(1.5) }, // row 6
  'poll.reference': { sqlite: atMost(1.0), postgres: atMost(1.3) }, // row 7
  'first-sync': { sqlite: atMost(1.5), postgres: atMost(2.0) }, // row 9
};

/** The goal of figure `id` on `engine`. */
export function goalOf(id: string, engine: EngineName): Target {
  const goals = ENGINE_GOALS[id];
  if (!goals) throw new Error(`no goal for ${id}`);
  return goals[engine];
}

/**
 * A figure judged by today's goal: the table of an earlier run (bench/results.json) rendered
 * again after the goals changed. Figures without an engine goal stay as they were.
 */
export function withTodaysGoal(figure: Figure): Figure {
  const goals = ENGINE_GOALS[figure.id];
  if (!goals || !figure.engine || figure.result === 'pending') return figure;
  const target = goals[figure.engine];
  const judged = figure.ratio !== undefined ? figure.ratio : figure.value;
  return { ...figure, target, result: judge(judged, target) };
}
