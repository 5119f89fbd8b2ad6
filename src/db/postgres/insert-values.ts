import { createHash } from 'node:crypto';
import { insertTail, valueOf, type RowsInsert } from '../sql.js';

/*
 * Rows inserted several to a statement on PostgreSQL: INSERT ... VALUES ($1, ...), ($n, ...),
 * each value a parameter of its own. The server types each parameter from its target column and
 * reads it as sent: there is no JSON to build on our side and take apart on the server's, as a
 * set statement over json_to_recordset needs (set-sql.ts). Storing 4,593 webhook deliveries 50 to
 * a statement, the server's time in that INSERT fell from 1,863 ms to 867 ms (pg_stat_statements;
 * docs/performance.md has the rest).
 *
 * The statements are prepared, each under a name of its own, once per connection. So that their
 * number stays small whatever the batches' sizes, rows go in shapes of a power of two rows, the
 * widest first (100 rows: 64, 32 and 4). A shape's parameters stay under PARAMETERS_PER_SHAPE:
 * a prepared 100-row INSERT of request_profiles' 109 columns held 3.3 MB of the server's memory,
 * and every connection of the pool keeps its own.
 */

/** Rows in the widest shape at most. */
const MAX_ROWS_PER_SHAPE = 64;
/** Parameters of the widest shape at most (one row's, when a row has more). */
const PARAMETERS_PER_SHAPE = 2_048;

/** A prepared statement and its parameters. */
export interface ValuesStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** The rows of each statement that inserts `rows` rows `width` columns wide, in order. */
export function shapesFor(rows: number, width: number): number[] {
  const fits = Math.min(MAX_ROWS_PER_SHAPE, Math.floor(PARAMETERS_PER_SHAPE / width));
  let widest = 1;
  while (widest * 2 <= fits) widest *= 2;
  const shapes: number[] = [];
  let left = rows;
  for (let shape = widest; left > 0; shape /= 2) {
    while (left >= shape) {
      shapes.push(shape);
      left -= shape;
    }
  }
  return shapes;
}

/** Each RowsInsert's statements, by rows, built once each. */
const built = new WeakMap<RowsInsert, Map<number, { name: string; text: string }>>();

function statementOf(into: RowsInsert, rows: number): { name: string; text: string } {
  let byRows = built.get(into);
  if (!byRows) {
    byRows = new Map();
    built.set(into, byRows);
  }
  let statement = byRows.get(rows);
  if (!statement) {
    const width = into.columns.length;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r += 1) {
      const row: string[] = [];
      for (let c = 1; c <= width; c += 1)
        row.push(valueOf(into, into.columns[c - 1]!, `$${r * width + c}`));
      tuples.push(`(${row.join(', ')})`);
    }
    const text = `INSERT INTO ${into.table} (${into.columns.join(', ')}) VALUES ${tuples.join(', ')}${insertTail(into)}`;
    const name = `v_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statement = { name, text };
    byRows.set(rows, statement);
  }
  return statement;
}

/**
 * The statements that insert `rows`, in order. A member missing from a row is NULL, as a named
 * parameter missing from a statement's parameters is on this engine.
 */
export function valuesStatements(into: RowsInsert, rows: readonly object[]): ValuesStatement[] {
  const { columns } = into;
  const statements: ValuesStatement[] = [];
  let next = 0;
  for (const shape of shapesFor(rows.length, columns.length)) {
    const values = new Array<unknown>(shape * columns.length);
    let v = 0;
    for (let r = next; r < next + shape; r += 1) {
      const row = rows[r] as Record<string, unknown>;
      for (const column of columns) values[v++] = row[column] ?? null;
    }
    statements.push({ ...statementOf(into, shape), values });
    next += shape;
  }
  return statements;
}
