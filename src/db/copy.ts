import { TransportError } from '../errors.js';
import { isoFromMs } from '../time.js';
import { compareTable, type TableComparison } from './copy/compare.js';
import { COPY_LIMITS, COPY_SOURCE_KEY, type CopyLimits } from './copy/rows.js';
import { copyTable, type CopyProgress } from './copy/write.js';
import { openDatabase, openForReading, type DatabaseTarget } from './open.js';
import type { PostgresConnection } from './postgres/connection.js';
import { TABLES } from './schema/index.js';
import type { SqliteConnection } from './sqlite/connection.js';
import { readSyncState } from './store/sync-state-store.js';

export type { CopyLimits } from './copy/rows.js';
export type { CopyProgress } from './copy/write.js';

/** A daemon's owner lease renewed this recently means it still writes the file. */
const LEASE_FRESH_MS = 60_000;

/** What copying one table found. */
export interface TableCopy extends TableComparison {
  table: string;
  /** Rows this run copied (a resumed copy: those after the last checkpoint). */
  copied: number;
}

/**
 * Copies every table of a SQLite mirror into a PostgreSQL database migrated to the same schema
 * and holding no mirror yet: requests with their rows, the change log, the outbox with its
 * delivery state, webhook events, runs, quarantine, drift, gaps and checkpoints, ids included.
 * Each batch commits with a checkpoint, so a copy that was killed resumes after its last batch
 * when run again. At the end each table is compared: row count, and a checksum of every row's
 * values as both engines read them back.
 *
 * It streams: a table is read, written and compared a bounded batch or page at a time
 * (`limits`), so the memory it takes does not grow with the mirror.
 */
export async function copyMirror({
  source,
  target,
  onProgress,
  limits = COPY_LIMITS,
}: {
  source: SqliteConnection;
  target: PostgresConnection;
  onProgress?: CopyProgress;
  limits?: CopyLimits;
}): Promise<TableCopy[]> {
  await claimTarget(source, target);
  const results: TableCopy[] = [];
  for (const table of TABLES) {
    const copied = await copyTable({
      source,
      target,
      table,
      limits,
      ...(onProgress && { onProgress }),
    });
    results.push({
      table: table.name,
      copied,
      ...(await compareTable({ source, target, table, limits })),
    });
  }
  await resetIdentities(target);
  if (results.every((result) => result.isEqual)) {
    await target.transaction(async (sql) => {
      await sql.run("DELETE FROM sync_state WHERE substr(key, 1, 5) = 'copy:'");
    });
  }
  return results;
}

/**
 * The copy as `transport-sync copy` runs it: opens the SQLite file read-only, refuses it while a
 * daemon still writes it, opens (and migrates) the PostgreSQL target, and copies. `onStarted`
 * is called once both are open, before the first row moves.
 */
export async function copyFile({
  sourcePath,
  target,
  onStarted,
  onProgress,
  limits,
}: {
  sourcePath: string;
  target: DatabaseTarget;
  onStarted?: () => void;
  onProgress?: CopyProgress;
  limits?: CopyLimits;
}): Promise<TableCopy[]> {
  const source = await openForReading({ location: sourcePath });
  try {
    if (source.engine !== 'sqlite') throw new Error('unreachable: the source is a file');
    const lease = await readSyncState(source, 'daemon_owner');
    if (lease && Date.now() - Date.parse(lease.updated_at) < LEASE_FRESH_MS) {
      throw new TransportError({
        code: 'copy.source_in_use',
        message: `a daemon is running on ${sourcePath} (its lease was renewed at ${lease.updated_at})`,
        hint: 'Stop it first (systemctl stop transport-sync), so that the copy is the mirror as it stands.',
      });
    }
    const db = await openDatabase(target);
    try {
      if (db.engine !== 'postgres') throw new Error('unreachable: the target is a URL');
      onStarted?.();
      return await copyMirror({
        source,
        target: db,
        ...(onProgress && { onProgress }),
        ...(limits && { limits }),
      });
    } finally {
      await db.close();
    }
  } finally {
    await source.close();
  }
}

/** The target must be empty, or hold this source's unfinished copy. */
async function claimTarget(source: SqliteConnection, target: PostgresConnection): Promise<void> {
  await target.transaction(async (sql) => {
    const claim = await sql.get<{ value: string }>(
      'SELECT value FROM sync_state WHERE key = @key',
      { key: COPY_SOURCE_KEY },
    );
    if (claim) {
      if (claim.value === source.path) return;
      throw new TransportError({
        code: 'copy.target_busy',
        message: `the target holds an unfinished copy of another mirror (${claim.value})`,
        hint: 'Finish that copy, or copy into a new, empty database.',
      });
    }
    const held = await sql.get<{ n: number }>(
      `SELECT (SELECT count(*) FROM requests) + (SELECT count(*) FROM webhook_events)
         + (SELECT count(*) FROM outbox_actions) + (SELECT count(*) FROM outbox_locations) AS n`,
    );
    if ((held?.n ?? 0) > 0) {
      throw new TransportError({
        code: 'copy.target_not_empty',
        message: 'the target database already holds a mirror; copy only into an empty one',
        hint: 'Create a new database (CREATE DATABASE ...) and give its URL to --to.',
      });
    }
    await sql.run(`INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @at)`, {
      key: COPY_SOURCE_KEY,
      value: source.path,
      at: isoFromMs(Date.now()),
    });
  });
}

/** Identities continue after the ids copied. */
async function resetIdentities(target: PostgresConnection): Promise<void> {
  await target.transaction(async (sql) => {
    for (const table of TABLES) {
      const id = Object.entries(table.columns).find(([, column]) => column.kind === 'id')?.[0];
      if (!id) continue;
      await sql.get(
        `SELECT setval(pg_get_serial_sequence('${table.name}', '${id}'),
           coalesce((SELECT max(${id}) FROM ${table.name}), 0) + 1, false)`,
      );
    }
  });
}
