import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createRowInserter,
  ROWS_PER_INSERT,
  shapesFor,
} from '../../../src/db/sqlite/insert-shapes.js';
import { insertOneSql, type RowsInsert } from '../../../src/db/sql.js';

/*
 * Rows inserted several to a statement on SQLite (src/db/sqlite/insert-shapes.ts) leave the
 * table as one named INSERT a row does, in order, conflicts included, and prepare two statements
 * per table whatever the number of rows.
 */

const PLAIN: RowsInsert = { table: 't', columns: ['id', 'name', 'n'] };
const UPSERT: RowsInsert = {
  table: 't',
  columns: ['id', 'name', 'n'],
  onConflict: 'ON CONFLICT (id) DO UPDATE SET name = excluded.name, n = t.n + excluded.n',
};

interface Row {
  id: number;
  name: string | null;
  n: number;
}

let sqlite: Database.Database;
let prepared: string[];

beforeEach(() => {
  sqlite = new Database(':memory:');
  sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER NOT NULL)');
  prepared = [];
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((text: string) => (
    prepared.push(text),
    prepare(text)
  )) as typeof sqlite.prepare;
});
afterEach(() => sqlite.close());

const tableRows = (db: Database.Database) =>
  db.prepare('SELECT id, name, n FROM t ORDER BY id').all() as Row[];

/** The same rows, one named INSERT a row, into a database of their own. */
function oneByOne(into: RowsInsert, rows: readonly Row[]): Row[] {
  const db = new Database(':memory:');
  try {
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER NOT NULL)');
    const statement = db.prepare(insertOneSql(into));
    for (const row of rows) statement.run(row);
    return tableRows(db);
  } finally {
    db.close();
  }
}

const rowsOf = (count: number, from = 0): Row[] =>
  Array.from({ length: count }, (_, i) => ({ id: from + i, name: `r${from + i}`, n: i }));

describe('rows inserted several to a statement', () => {
  it('inserts every row of any count, the wide shape first and single rows for the rest', () => {
    const insertRows = createRowInserter(sqlite);
    const counts = [0, 1, ROWS_PER_INSERT - 1, ROWS_PER_INSERT, ROWS_PER_INSERT + 1, 50];
    let from = 0;
    for (const count of counts) {
      insertRows(PLAIN, rowsOf(count, from));
      from += count;
    }
    expect(tableRows(sqlite)).toEqual(
      counts.flatMap((count, i) => {
        const start = counts.slice(0, i).reduce((a, b) => a + b, 0);
        return rowsOf(count, start);
      }),
    );
    expect(shapesFor(50)).toEqual({ wide: 3, one: 2 });
    // Two statements for the table, whatever the counts.
    expect(prepared.filter((text) => text.startsWith('INSERT'))).toHaveLength(2);
  });

  it('computes a column from its parameter where the insert gives it SQL, in either shape', () => {
    const into: RowsInsert = { ...PLAIN, valueSql: { name: "('name ' || ?)" } };
    const rows = rowsOf(ROWS_PER_INSERT + 1);
    createRowInserter(sqlite)(into, rows);
    expect(tableRows(sqlite)).toEqual(rows.map((row) => ({ ...row, name: `name ${row.name}` })));
    expect(tableRows(sqlite)).toEqual(oneByOne(into, rows));
  });

  it('takes each column by name, ignores other members and refuses a row that lacks one', () => {
    const insertRows = createRowInserter(sqlite);
    insertRows(PLAIN, [{ n: 1, name: null, id: 7, extra: 'not a column' }]);
    expect(tableRows(sqlite)).toEqual([{ id: 7, name: null, n: 1 }]);
    expect(() => insertRows(PLAIN, [{ id: 8, n: 1 }])).toThrow(/Missing named parameter "name"/);
  });

  it('gives back what RETURNING names, in order, only for the rows DO NOTHING inserted', () => {
    const insertRows = createRowInserter(sqlite);
    const ONCE: RowsInsert = {
      ...PLAIN,
      onConflict: 'ON CONFLICT (id) DO NOTHING',
      returning: 'id',
    };
    expect(insertRows(ONCE, rowsOf(2))).toEqual([{ id: 0 }, { id: 1 }]);
    const rows = rowsOf(ROWS_PER_INSERT + 3);
    expect(insertRows(ONCE, rows)).toEqual(rows.slice(2).map(({ id }) => ({ id })));
    expect(insertRows(PLAIN, [])).toEqual([]);
  });

  it('throws on a row that breaks a constraint, and the rollback around it leaves nothing', () => {
    const insertRows = createRowInserter(sqlite);
    const rows = rowsOf(2 * ROWS_PER_INSERT);
    rows[ROWS_PER_INSERT + 3] = { ...rows[ROWS_PER_INSERT + 3]!, n: null as unknown as number };
    const inTransaction = sqlite.transaction(() => insertRows(PLAIN, rows));
    expect(() => inTransaction()).toThrow(/NOT NULL/);
    expect(tableRows(sqlite)).toEqual([]);
  });

  it('leaves the table as one INSERT a row does, for any rows, repeated keys and conflicts included', () => {
    const row = fc.record({
      id: fc.integer({ min: 0, max: 20 }),
      name: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
      n: fc.integer({ min: -5, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 3 * ROWS_PER_INSERT + 3, size: 'max' }), (rows) => {
        sqlite.exec('DELETE FROM t');
        createRowInserter(sqlite)(UPSERT, rows);
        expect(tableRows(sqlite)).toEqual(oneByOne(UPSERT, rows));
      }),
      { numRuns: 200 },
    );
  });
});
