import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shapesFor, valuesStatements } from '../../../src/db/postgres/insert-values.js';
import type { RowsInsert } from '../../../src/db/sql.js';

/*
 * How PostgreSQL's rows split into multi-row INSERTs (src/db/postgres/insert-values.ts): shapes
 * of a power of two rows, widest first, so that a connection prepares a handful of statements per
 * table whatever the batches' sizes.
 */

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

describe('the shapes rows go in on PostgreSQL', () => {
  it('splits a count into powers of two, widest first, within the parameters of a shape', () => {
    expect(shapesFor(0, 11)).toEqual([]);
    expect(shapesFor(1, 11)).toEqual([1]);
    expect(shapesFor(100, 11)).toEqual([64, 32, 4]);
    expect(shapesFor(200, 29)).toEqual([64, 64, 64, 8]);
    // request_profiles' 109 columns: 16 rows (1,744 parameters) to the widest statement.
    expect(shapesFor(100, 109)).toEqual([16, 16, 16, 16, 16, 16, 4]);
    // A row wider than the parameters of a shape still goes in, one to a statement.
    expect(shapesFor(3, 5_000)).toEqual([1, 1, 1]);
  });

  it('for any count and width: every row once, powers of two, at most seven shapes in all', () => {
    fc.assert(
      fc.property(fc.nat({ max: 5_000 }), fc.integer({ min: 1, max: 200 }), (rows, width) => {
        const shapes = shapesFor(rows, width);
        expect(shapes.reduce((sum, shape) => sum + shape, 0)).toBe(rows);
        expect(shapes.every(isPowerOfTwo)).toBe(true);
        expect(shapes).toEqual([...shapes].sort((a, b) => b - a));
        expect(new Set(shapes).size).toBeLessThanOrEqual(7);
        if (shapes.length > 0) expect(shapes[0]! * width <= 2_048 || shapes[0] === 1).toBe(true);
      }),
    );
  });

  it('binds each row’s columns by name, in order, a missing member as NULL, and names each shape once', () => {
    const into: RowsInsert = {
      table: 't',
      columns: ['id', 'name'],
      onConflict: 'ON CONFLICT (id) DO NOTHING',
      returning: 'id',
    };
    const rows = Array.from({ length: 5 }, (_, i) => ({ name: `r${i}`, id: i, extra: 'x' }));
    rows[2] = { id: 2, extra: 'x' } as (typeof rows)[number];
    const statements = valuesStatements(into, rows);
    expect(statements.map((s) => s.values)).toEqual([
      [0, 'r0', 1, 'r1', 2, null, 3, 'r3'],
      [4, 'r4'],
    ]);
    expect(statements[0]!.text).toBe(
      'INSERT INTO t (id, name) VALUES ($1, $2), ($3, $4), ($5, $6), ($7, $8) ON CONFLICT (id) DO NOTHING RETURNING id',
    );
    expect(statements[1]!.text).toBe(
      'INSERT INTO t (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
    );
    // The same shape, the same statement: one name, prepared once per connection.
    const again = valuesStatements(into, rows.slice(0, 4));
    expect(again[0]!.name).toBe(statements[0]!.name);
    expect(new Set(statements.map((s) => s.name)).size).toBe(2);
  });

  it('writes a column the server computes as its SQL around that row’s own parameter', () => {
    const into: RowsInsert = {
      table: 't',
      columns: ['id', 'name'],
      valueSql: { name: '(SELECT label FROM labels WHERE key = ?)' },
    };
    const [statement, ...rest] = valuesStatements(into, [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    expect(rest).toEqual([]);
    expect(statement!.text).toBe(
      'INSERT INTO t (id, name) VALUES ($1, (SELECT label FROM labels WHERE key = $2)), ($3, (SELECT label FROM labels WHERE key = $4))',
    );
    expect(statement!.values).toEqual([1, 'a', 2, 'b']);
  });
});
