import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { insertOneSql, type RowsInsert, type Sql } from '../../../src/db/sql.js';
import { openedMigratedDatabase } from '../../helpers/engine.js';

/*
 * Rows inserted several to a statement on PostgreSQL (src/db/postgres/insert-values.ts) leave a
 * table as one named INSERT a row does, in order, and give back what RETURNING names, through a
 * handful of prepared statements per table. PostgreSQL's alone: left out of the sqlite project
 * (vitest.config.ts), which tests SQLite's shapes in insert-shapes.sqlite.test.ts.
 */

const COLUMNS = ['id', 'name', 'n'];
const PLAIN: RowsInsert = { table: 't', columns: COLUMNS, returning: 'id, seq' };
const UPSERT: RowsInsert = {
  table: 't',
  columns: COLUMNS,
  onConflict: 'ON CONFLICT (id) DO UPDATE SET name = excluded.name, n = t.n + excluded.n',
};
const ONCE: RowsInsert = {
  table: 't',
  columns: COLUMNS,
  onConflict: 'ON CONFLICT (id) DO NOTHING',
  returning: 'id',
};

interface Row {
  id: number;
  name: string | null;
  n: number;
}

const { db } = openedMigratedDatabase();
beforeEach(async () => {
  await db().transaction(async (sql) => {
    await sql.run('DROP TABLE IF EXISTS t');
    await sql.run(
      'CREATE TABLE t (seq bigserial, id integer PRIMARY KEY, name text, n integer NOT NULL)',
    );
  });
});

const tableRows = (sql: Sql) => sql.all<Row>('SELECT id, name, n FROM t ORDER BY id');
const rowsOf = (count: number, from = 0): Row[] =>
  Array.from({ length: count }, (_, i) => ({ id: from + i, name: `r${from + i}`, n: i }));

describe('rows inserted several to a statement on PostgreSQL', () => {
  it('inserts every row of any count in order, through a statement per shape prepared once', async () => {
    const counts = [0, 1, 15, 16, 17, 63, 64, 65, 100, 200];
    await db().transaction(async (sql) => {
      let from = 0;
      for (const count of counts) {
        const returned = await sql.insertRows<{ id: number; seq: string }>(
          PLAIN,
          rowsOf(count, from),
        );
        expect(returned.map((row) => row.id)).toEqual(rowsOf(count, from).map((row) => row.id));
        from += count;
      }
      const stored = await sql.all<{ id: number; seq: string }>('SELECT id, seq FROM t');
      expect(stored).toHaveLength(from);
      // In the order given: the sequence numbers follow the rows.
      expect(stored.every((row) => Number(row.seq) === row.id + 1)).toBe(true);
      // Shapes of 1 to 64 rows: seven statements for 575 rows in ten calls.
      const prepared = await sql.all<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO t %'`,
      );
      expect(prepared[0]!.n).toBe(7);
    });
  });

  it('binds each column by name, ignores other members, and stores a missing member as NULL', async () => {
    await db().transaction(async (sql) => {
      await sql.insertRows(UPSERT, [
        { n: 1, name: 'kept', id: 7, extra: 'not a column' },
        { id: 8, n: 2 },
      ]);
      expect(await tableRows(sql)).toEqual([
        { id: 7, name: 'kept', n: 1 },
        { id: 8, name: null, n: 2 },
      ]);
    });
  });

  it('gives back only the rows it inserted under DO NOTHING, a key repeated in one statement included', async () => {
    await db().transaction(async (sql) => {
      await sql.insertRows(ONCE, rowsOf(2));
      const rows = [...rowsOf(4), { id: 3, name: 'again', n: 9 }];
      const returned = await sql.insertRows<{ id: number }>(ONCE, rows);
      expect(returned.map((row) => row.id)).toEqual([2, 3]);
      expect((await tableRows(sql)).find((row) => row.id === 3)?.name).toBe('r3');
    });
  });

  it('throws on a row that breaks a constraint, and the rollback leaves nothing', async () => {
    const rows = rowsOf(80);
    rows[70] = { ...rows[70]!, n: null as unknown as number };
    await expect(db().transaction((sql) => sql.insertRows(UPSERT, rows))).rejects.toThrow(
      /null value/,
    );
    expect(await db().read(tableRows)).toEqual([]);
  });

  it('leaves the table as one INSERT a row does, over stored rows, for any rows of distinct keys', async () => {
    // A statement may not update one row twice (ON CONFLICT DO UPDATE): the callers write rows of
    // distinct keys (one per request, per drift key).
    const row = fc.record({
      id: fc.integer({ min: 0, max: 150 }),
      name: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
      n: fc.integer({ min: -5, max: 5 }),
    });
    const rows = fc.uniqueArray(row, { selector: (r) => r.id, maxLength: 140, size: 'max' });
    await fc.assert(
      fc.asyncProperty(rows, rows, async (stored, written) => {
        const [several, oneByOne] = await db().transaction(async (sql) => {
          const results: Row[][] = [];
          for (const insertAll of [
            () => sql.insertRows(UPSERT, written),
            async () => {
              for (const one of written) await sql.run(insertOneSql(UPSERT), one);
            },
          ]) {
            await sql.run('DELETE FROM t');
            for (const one of stored) await sql.run(insertOneSql(UPSERT), one);
            await insertAll();
            results.push(await tableRows(sql));
          }
          return results;
        });
        expect(several).toEqual(oneByOne);
      }),
      { numRuns: 40 },
    );
  });
});
