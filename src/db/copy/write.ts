import { isoFromMs } from '../../time.js';
import type { PostgresConnection } from '../postgres/connection.js';
import type { Table } from '../schema/index.js';
import type { SqliteConnection } from '../sqlite/connection.js';
import {
  checkpointKey,
  countSource,
  isMirrorRow,
  processKeyIndex,
  sizeOf,
  sourceRows,
  type CopyLimits,
} from './rows.js';

/** Progress of one table: rows of the mirror in the target so far, of those in the source. */
export type CopyProgress = (table: string, copied: number, total: number) => void;

/** A batch read from the source: the rows to write, and the rowid to resume after. */
interface Batch {
  /** Raw rows: the rowid first, then the values in column order. */
  rows: unknown[][];
  /** The last rowid read, sync_state's process keys included; undefined at the end. */
  lastRowid: number | undefined;
}

const CHECKPOINT = `INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @at)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/**
 * Copies one table, after the rowid its checkpoint names (0 on a first run), and returns the rows
 * this run copied. The source is read in rowid order, a page at a time (sourceRows); each batch
 * is written as one INSERT with a PostgreSQL array per column (`unnest`: one statement text
 * per table whatever the batch, and no limit on parameters), committed with its checkpoint.
 * While the server inserts a batch, the next one is read from the file: at most two batches are
 * held, whatever the size of the table.
 */
export async function copyTable({
  source,
  target,
  table,
  limits,
  onProgress,
}: {
  source: SqliteConnection;
  target: PostgresConnection;
  table: Table;
  limits: CopyLimits;
  onProgress?: CopyProgress;
}): Promise<number> {
  const columns = Object.keys(table.columns);
  const { after, types } = await target.read(async (sql) => ({
    after: Number(
      (
        await sql.get<{ value: string }>('SELECT value FROM sync_state WHERE key = @key', {
          key: checkpointKey(table.name),
        })
      )?.value ?? 0,
    ),
    types: await sql.all<{ name: string; type: string }>(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = to_regclass(@table) AND attnum > 0 AND NOT attisdropped`,
      { table: table.name },
    ),
  }));
  const insert = insertStatement(table, new Map(types.map((t) => [t.name, t.type])));
  const total = countSource(source, table);
  let done = after > 0 ? countSource(source, table, after) : 0;
  // Values start after the rowid.
  const keyIndex = processKeyIndex(table, 1);
  const rows = sourceRows(source, table, columns, after);
  const take = (): Batch => {
    const batch: Batch = { rows: [], lastRowid: undefined };
    let bytes = 0;
    while (batch.rows.length < limits.rows && bytes < limits.bytes) {
      const next = rows.next();
      if (next.done) break;
      batch.lastRowid = next.value[0] as number;
      if (!isMirrorRow(next.value, keyIndex)) continue;
      batch.rows.push(next.value);
      bytes += sizeOf(next.value, 1);
    }
    return batch;
  };
  let copied = 0;
  try {
    let batch = take();
    while (batch.lastRowid !== undefined) {
      const current = batch;
      await target.transaction(async (sql) => {
        // The commit need not wait for the disk: should the server crash, the batches it loses
        // lose their checkpoints with them, and the copy resumes before them. The copy's last
        // transactions (identities, checkpoints cleared) commit as usual, and a commit that
        // waits for the disk makes every earlier one durable with it.
        await sql.run('SET LOCAL synchronous_commit = off');
        const inserting =
          current.rows.length > 0
            ? sql.run(insert, columnArrays(columns, current.rows))
            : Promise.resolve(0);
        // Awaited below; a failure meanwhile must not go unhandled.
        inserting.catch(() => undefined);
        // The statement is on its way: read the next batch while the server inserts this one.
        batch = take();
        await inserting;
        await sql.run(CHECKPOINT, {
          key: checkpointKey(table.name),
          value: String(current.lastRowid),
          at: isoFromMs(Date.now()),
        });
      });
      copied += current.rows.length;
      done += current.rows.length;
      onProgress?.(table.name, done, total);
    }
  } finally {
    rows.return();
  }
  return copied;
}

/**
 * INSERT ... SELECT * FROM unnest(@a::type[], @b::type[], ...): each column's values as one
 * array of the target column's own type. A row the target already holds is left as it is
 * (ON CONFLICT DO NOTHING); the comparison at the end tells whether the tables are equal.
 */
function insertStatement(table: Table, types: Map<string, string>): string {
  const columns = Object.keys(table.columns);
  const arrays = columns.map((column) => {
    const type = types.get(column);
    if (type === undefined)
      throw new Error(`the target's ${table.name} has no column ${column}: migrate it first`);
    return `@${column}::${type}[]`;
  });
  return `INSERT INTO ${table.name} (${columns.join(', ')})
    SELECT * FROM unnest(${arrays.join(', ')})
    ON CONFLICT DO NOTHING`;
}

/** Raw rows (rowid first) as one array of values per column, by column name. */
function columnArrays(columns: readonly string[], rows: readonly unknown[][]) {
  const arrays: Record<string, unknown[]> = {};
  columns.forEach((column, index) => {
    const values = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i += 1) values[i] = rows[i]![index + 1];
    arrays[column] = values;
  });
  return arrays;
}
