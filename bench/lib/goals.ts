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

/** Each goal by the id of the figure it judges, with the row of the issues' tables. */
export const ENGINE_GOALS: Readonly<
  Record<string, { row: number } & Readonly<Record<EngineName, Target>>>
> = {
  'store.new': { row: 1, sqlite: atLeast(0.9), postgres: atLeast(0.8) },
  'store.changed': { row: 2, sqlite: atLeast(0.9), postgres: atLeast(0.8) },
  'store.poll': { row: 3, sqlite: atLeast(0.8), postgres: atLeast(0.7) },
  'store.webhooks': { row: 4, sqlite: atLeast(0.8), postgres: atLeast(0.7) },
  'backfill.rate': { row: 5, sqlite: atLeast(0.8), postgres: atLeast(0.6) },
  'poll.idle': { row: 6, sqlite: atMost(1.2), postgres: atMost(1.5) },
  'poll.reference': { row: 7, sqlite: atMost(1.0), postgres: atMost(1.3) },
  'first-sync': { row: 9, sqlite: atMost(1.5), postgres: atMost(2.0) },
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
