import type Database from 'better-sqlite3';
import { insertTail, valueOf, type RowsInsert } from '../sql.js';

/*
 * Rows inserted several to a statement on SQLite. Each statement that better-sqlite3 runs costs a
 * call into the addon and a lookup of each named parameter in its row; one INSERT of
 * ROWS_PER_INSERT rows, bound by position from one reused array, pays those once for all of
 * them. 100,000 rows of four columns, in transactions of 2,000: 234 to 275 ms one named row a
 * statement, 143 to 146 ms sixteen positional rows a statement, 140 to 143 ms fifty.
 *
 * OR FAIL: under SQLite's default (ABORT) a statement that may write several rows keeps a
 * statement journal, a copy of each page it changes, to undo its own earlier rows should a later
 * one break a constraint. That copy cost more than the binding saved (an earlier try measured
 * row 1's path 13 % slower). The mirror never needs that undo: a write that fails is never
 * followed by another in the same transaction or savepoint without rolling that back
 * (request-batch.ts, the store's transactions, the applier's savepoints), and the rollback undoes
 * the failed statement's rows with the rest.
 *
 * Two shapes per table (sixteen rows, and one for the rest), each prepared once: the statement
 * cache stays bounded whatever the batches' sizes.
 */

/** Rows per statement of the wide shape. */
export const ROWS_PER_INSERT = 16;

/** How many statements of each shape insert `rows` rows. */
export function shapesFor(rows: number): { wide: number; one: number } {
  return { wide: Math.floor(rows / ROWS_PER_INSERT), one: rows % ROWS_PER_INSERT };
}

interface Shapes {
  wide: Database.Statement;
  one: Database.Statement;
  /** The wide statement's parameters, refilled for each statement. */
  values: unknown[];
}

const valuesSql = (into: RowsInsert, rows: number) => {
  const row = `(${into.columns.map((column) => valueOf(into, column, '?')).join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
};

/** Inserts rows of one RowsInsert after another, through statements prepared on `sqlite`. */
export function createRowInserter(sqlite: Database.Database) {
  const shapes = new Map<RowsInsert, Shapes>();
  const shapesOf = (into: RowsInsert): Shapes => {
    let found = shapes.get(into);
    if (!found) {
      const head = `INSERT OR FAIL INTO ${into.table} (${into.columns.join(', ')}) VALUES `;
      const tail = insertTail(into);
      const width = into.columns.length;
      found = {
        wide: sqlite.prepare(head + valuesSql(into, ROWS_PER_INSERT) + tail),
        one: sqlite.prepare(head + valuesSql(into, 1) + tail),
        values: new Array<unknown>(width * ROWS_PER_INSERT),
      };
      shapes.set(into, found);
    }
    return found;
  };

  /** Copies row `row`'s columns into `values` from `offset` on. */
  const fill = (into: RowsInsert, row: object, values: unknown[], offset: number) => {
    const { columns } = into;
    for (let c = 0; c < columns.length; c += 1) {
      const value = (row as Record<string, unknown>)[columns[c]!];
      // As a named parameter would: a member missing from the row is a mistake, not a NULL.
      if (value === undefined) throw new TypeError(`Missing named parameter "${columns[c]}"`);
      values[offset + c] = value;
    }
  };

  /** Inserts `rows`; what `into.returning` gives back for them, in order (nothing without it). */
  return function insertRows(into: RowsInsert, rows: readonly object[]): unknown[] {
    const returned: unknown[] = [];
    if (rows.length === 0) return returned;
    const { wide, one, values } = shapesOf(into);
    const execute = into.returning
      ? (statement: Database.Statement, bound: unknown[]) => {
          for (const row of statement.all(bound)) returned.push(row);
        }
      : (statement: Database.Statement, bound: unknown[]) => statement.run(bound);
    const width = into.columns.length;
    const counts = shapesFor(rows.length);
    let next = 0;
    for (let statement = 0; statement < counts.wide; statement += 1) {
      for (let r = 0; r < ROWS_PER_INSERT; r += 1) fill(into, rows[next + r]!, values, r * width);
      execute(wide, values);
      next += ROWS_PER_INSERT;
    }
    const single = new Array<unknown>(width);
    for (let statement = 0; statement < counts.one; statement += 1) {
      fill(into, rows[next]!, single, 0);
      execute(one, single);
      next += 1;
    }
    return returned;
  };
}
