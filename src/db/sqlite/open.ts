import { closeSync, chmodSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { openSqliteDatabase } from './driver.js';
import './pin.js';
import { TransportError } from '../../errors.js';
import { isBehind, migrationsFolder, refuseNewer, type AppliedMigrations } from '../migrations.js';
import {
  createCheckpointer,
  WAL_PAGES_BEFORE_WRITER_CHECKPOINTS,
  type Checkpointer,
} from './checkpointer.js';
import { sqliteConnection, type SqliteConnection } from './connection.js';
import { databaseError } from './errors.js';

/** How to open a SQLite mirror. */
export interface SqliteOpenOptions {
  path: string;
  /** Apply pending migrations (the daemon and `migrate` do; `status` only reads). */
  shouldMigrate?: boolean;
  isReadOnly?: boolean;
  busyTimeoutMs?: number;
  /** Create the file's folder when it does not exist; otherwise refuse (db.folder_missing). */
  mayCreateFolder?: boolean;
}

/**
 * Opens (creating if needed, mode 0600) the database with the pragmas the mirror relies on: WAL so
 * that a reporting tool's read transaction never blocks the daemon nor the daemon it,
 * synchronous=NORMAL (durable at checkpoints, safe against corruption), a busy timeout, and
 * foreign keys. Refuses a database written by a newer version instead of touching it.
 */
export async function openSqlite(options: SqliteOpenOptions): Promise<SqliteConnection> {
  try {
    return await openFile(options);
  } catch (error) {
    // Where the file is known: a read-only folder, a full disk, a damaged file are named here.
    throw databaseError(error, options.path, { verb: 'open' });
  }
}

async function openFile({
  path,
  shouldMigrate = true,
  isReadOnly = false,
  busyTimeoutMs = 10_000,
  mayCreateFolder = false,
}: SqliteOpenOptions): Promise<SqliteConnection> {
  if (!isReadOnly) createPrivateFile(path, mayCreateFolder);
  let sqlite: Database.Database;
  try {
    sqlite = openSqliteDatabase(path, { readonly: isReadOnly, fileMustExist: isReadOnly });
  } catch (error) {
    const translated = databaseError(error, path, { verb: 'open' });
    if (translated instanceof TransportError) throw translated;
    throw new TransportError({
      code: 'db.open_failed',
      message: `cannot open the database ${path}: ${(error as Error).message}`,
      hint: 'Check TRANSPORT_DB and that the directory exists and is writable by this user.',
      cause: error,
    });
  }
  try {
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // Temporary tables, sorts and the journals of savepoints and statements in memory. Above
    // 64 KiB SQLite spills those journals to a file of SQLITE_TMPDIR, TMPDIR or /var/tmp: page
    // images of the mirror, patient data, in a folder other users share (a first sync of 300
    // requests wrote 700 pages there, a backfill of 4,600 some 40 MB). A write set's journal
    // holds the pages it changes, about 1 MB for a set of 100 requests. A sort larger than the
    // page cache (an index built over a large table) is held in memory too.
    sqlite.pragma('temp_store = MEMORY');
    if (!isReadOnly) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      // A thread checkpoints the WAL (checkpointer.ts); this is the writer's own, if it lags.
      sqlite.pragma(`wal_autocheckpoint = ${WAL_PAGES_BEFORE_WRITER_CHECKPOINTS}`);
    }
    sqlite.pragma('foreign_keys = ON');
    const applied = appliedMigrations(sqlite);
    refuseNewer(applied, 'sqlite', path);
    if (shouldMigrate && !isReadOnly && isBehind(applied, 'sqlite')) await migrate(sqlite);
    if (!isReadOnly) tightenModes(path);
    return sqliteConnection(sqlite, path, checkpointerOf(sqlite, path, isReadOnly));
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

function checkpointerOf(
  sqlite: Database.Database,
  path: string,
  isReadOnly: boolean,
): Checkpointer | undefined {
  if (isReadOnly || path === ':memory:') return undefined;
  return createCheckpointer(resolve(path), sqlite.pragma('page_size', { simple: true }) as number);
}

/**
 * Applies the pending migrations. drizzle's migrator (and the hundred modules behind it) is loaded
 * only when there is one to apply: an up-to-date mirror opens without it.
 */
async function migrate(sqlite: Database.Database): Promise<void> {
  const [{ drizzle }, { migrate: applyMigrations }] = await Promise.all([
    import('drizzle-orm/better-sqlite3'),
    import('drizzle-orm/better-sqlite3/migrator'),
  ]);
  applyMigrations(drizzle(sqlite), { migrationsFolder: migrationsFolder('sqlite') });
}

/** How many migrations this database has applied, and the newest one's time. */
export function appliedMigrations(sqlite: Database.Database): AppliedMigrations {
  const exists = sqlite
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
    .get();
  if (!exists) return { count: 0, newestAt: null };
  const row = sqlite
    .prepare('SELECT count(*) AS n, max(created_at) AS at FROM __drizzle_migrations')
    .get() as { n: number; at: number | null };
  return { count: row.n, newestAt: row.at };
}

/**
 * Creates the file private to this user before SQLite first opens it, and its folder only when
 * told to: a folder that does not exist is more often a typing mistake than a new mirror.
 */
function createPrivateFile(path: string, mayCreateFolder: boolean): void {
  if (path === ':memory:' || existsSync(path)) return;
  const folder = dirname(resolve(path));
  if (!existsSync(folder)) {
    if (!mayCreateFolder) {
      throw new TransportError({
        code: 'db.folder_missing',
        message: `the folder ${folder} of the database ${path} does not exist`,
        hint: 'Check TRANSPORT_DB (or --db) for a typing mistake. For a new mirror there, create the folder or run `transport-sync migrate`, which creates it.',
      });
    }
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  }
  closeSync(openSync(path, 'a', 0o600));
}

/**
 * SQLite gives -wal and -shm the database file's mode, but a file created by an older version or
 * copied in by an operator may be wider: bring all three back to 0600. Only bits are taken away:
 * a file the operator made read-only stays read-only, and one already private is not touched.
 */
function tightenModes(path: string): void {
  if (path === ':memory:') return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(file)) continue;
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) chmodSync(file, mode & 0o600);
  }
}
