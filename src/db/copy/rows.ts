import type { Table } from '../schema/index.js';
import type { SqliteConnection } from '../sqlite/connection.js';

/** sync_state keys of a copy in progress: the source, and each table's last copied row. */
export const COPY_SOURCE_KEY = 'copy:source';
export const checkpointKey = (table: string) => `copy:${table}`;

/**
 * sync_state keys that describe the running daemons, not the mirror: the SQLite owner lease and
 * the members of a cluster. They are not copied (the daemons on PostgreSQL write their own) and
 * not compared; neither are the copy's own checkpoints.
 */
export const isProcessKey = (key: string) =>
  key === 'daemon_owner' ||
  key === 'leader' ||
  key.startsWith('member:') ||
  key.startsWith('copy:');

/**
 * How much of a table the copy holds in memory at once: a batch to write (one PostgreSQL
 * transaction with its checkpoint) and a page of the target to read back, each cut at whichever
 * limit comes first. Memory stays the same whatever the size of the mirror. The bytes bound it:
 * 256 KiB is about 90 requests, or 2,500 of the narrow request_fields rows; 1 MiB batches
 * copied no faster.
 */
export interface CopyLimits {
  rows: number;
  /** The values' size, about: see sizeOf. */
  bytes: number;
}

export const COPY_LIMITS: CopyLimits = { rows: 5000, bytes: 2 ** 18 };

/** What a value costs beside its characters: its slot, and a string's or number's header. */
const VALUE_BYTES = 16;

/** The size of a row's values, from index `from`, about: characters, and VALUE_BYTES each. */
export function sizeOf(values: readonly unknown[], from = 0): number {
  let bytes = 0;
  for (let i = from; i < values.length; i += 1) {
    const value = values[i];
    bytes += VALUE_BYTES + (typeof value === 'string' ? value.length : 0);
  }
  return bytes;
}

/**
 * Where `sync_state`'s key sits in a row of `columns`, offset by `from`; -1 for another table,
 * whose rows are all the mirror's.
 */
export function processKeyIndex(table: Table, from = 0): number {
  return table.name === 'sync_state' ? Object.keys(table.columns).indexOf('key') + from : -1;
}

/** Whether a row (values in column order, from `keyIndex`'s offset) belongs to the mirror. */
export const isMirrorRow = (values: readonly unknown[], keyIndex: number) =>
  keyIndex < 0 || !isProcessKey(String(values[keyIndex]));

/** Rows of the mirror in a source table, or in its rows up to rowid `upTo`. */
export function countSource(source: SqliteConnection, table: Table, upTo?: number): number {
  const where = upTo === undefined ? '' : ' WHERE rowid <= ?';
  const args = upTo === undefined ? [] : [upTo];
  if (table.name !== 'sync_state') {
    const row = source.sqlite
      .prepare(`SELECT count(*) AS n FROM ${table.name}${where}`)
      .get(...args);
    return (row as { n: number }).n;
  }
  // A handful of rows: counted as the copy filters them.
  let rows = 0;
  for (const [key] of source.sqlite
    .prepare(`SELECT key FROM sync_state${where}`)
    .raw(true)
    .all(...args) as [string][]) {
    if (!isProcessKey(key)) rows += 1;
  }
  return rows;
}

/** Rows of a source page: enough to keep the file's reads cheap, few enough to hold. */
const SOURCE_PAGE_ROWS = 500;

/**
 * A table's rows in rowid order after `after`, each raw (the rowid first, then `columns`), read a
 * page at a time by rowid. Not with better-sqlite3's iterate(): the copy runs in a worker thread,
 * and an iterator still known to the thread's isolate when the thread ends is freed after the
 * thread's environment, which aborts the process on Node 24
 * (node::RemoveEnvironmentCleanupHook: Assertion failed). The source is not written meanwhile:
 * the copy refuses a file whose daemon is running.
 */
export function* sourceRows(
  source: SqliteConnection,
  table: Table,
  columns: readonly string[],
  after = 0,
): Generator<unknown[], void, undefined> {
  const page = source.sqlite
    .prepare(
      `SELECT rowid, ${columns.join(', ')} FROM ${table.name}
       WHERE rowid > ? ORDER BY rowid LIMIT ${SOURCE_PAGE_ROWS}`,
    )
    .raw(true);
  let last = after;
  for (;;) {
    const rows = page.all(last) as unknown[][];
    yield* rows;
    if (rows.length < SOURCE_PAGE_ROWS) return;
    last = rows.at(-1)![0] as number;
  }
}
