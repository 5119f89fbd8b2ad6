import { hasTable } from './tables.js';
import { closeSync, chmodSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { TransportError } from '../errors.js';
import * as schema from './schema.js';
import * as webhookSchema from './schema-webhooks.js';

/** The migrations folder: drizzle/ at the package root, from src/db or dist/db alike. */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** An open mirror database: the raw handle for hot paths and drizzle for the rest. */
export interface MirrorDb {
  sqlite: Database.Database;
  orm: BetterSQLite3Database<typeof schema & typeof webhookSchema>;
  path: string;
  close(): void;
}

interface OpenOptions {
  path: string;
  /** Apply pending migrations (the daemon and `migrate` do; `status` only reads). */
  shouldMigrate?: boolean;
  isReadOnly?: boolean;
  busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed, mode 0600) the database with the pragmas the mirror relies on: WAL so
 * that a reporting tool's read transaction never blocks the daemon nor the daemon it,
 * synchronous=NORMAL (durable at checkpoints, safe against corruption), a busy timeout, and
 * foreign keys. Refuses a database written by a newer version instead of touching it.
 */
export function openDatabase({
  path,
  shouldMigrate = true,
  isReadOnly = false,
  busyTimeoutMs = 10_000,
}: OpenOptions): MirrorDb {
  if (!isReadOnly) createPrivateFile(path);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path, { readonly: isReadOnly, fileMustExist: isReadOnly });
  } catch (error) {
    throw new TransportError({
      code: 'db.open_failed',
      message: `cannot open the database ${path}: ${(error as Error).message}`,
      hint: 'Check TRANSPORT_DB and that the directory exists and is writable by this user.',
      cause: error,
    });
  }
  try {
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!isReadOnly) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
    }
    sqlite.pragma('foreign_keys = ON');
    refuseNewerSchema(sqlite, path);
    const orm = drizzle(sqlite, { schema: { ...schema, ...webhookSchema } });
    if (shouldMigrate && !isReadOnly) migrate(orm, { migrationsFolder: MIGRATIONS_FOLDER });
    if (!isReadOnly) tightenModes(path);
    return { sqlite, orm, path, close: () => sqlite.close() };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

/** Migrations this version knows, in order. */
export function knownMigrations(): { tag: string; when: number }[] {
  const journal = JSON.parse(
    readFileSync(resolve(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8'),
  );
  return journal.entries.map((entry: { tag: string; when: number }) => ({
    tag: entry.tag,
    when: entry.when,
  }));
}

/** The number of migrations applied to this database (0 for a new one). */
export function schemaVersion(sqlite: Database.Database): number {
  if (!hasTable(sqlite, '__drizzle_migrations')) return 0;
  return (sqlite.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number })
    .n;
}

function refuseNewerSchema(sqlite: Database.Database, path: string): void {
  const applied = schemaVersion(sqlite);
  if (applied === 0) return;
  const known = knownMigrations();
  const newest = sqlite.prepare('SELECT max(created_at) AS at FROM __drizzle_migrations').get() as {
    at: number | null;
  };
  const newestKnown = known.at(-1)?.when ?? 0;
  if (applied > known.length || (newest.at ?? 0) > newestKnown) {
    throw new TransportError({
      code: 'db.newer_schema',
      message: `the database ${path} has schema version ${applied}, newer than this transport-sync knows (${known.length}); it was left untouched`,
      hint: 'Run the transport-sync version that wrote it, or restore a backup made by this version.',
    });
  }
}

/** Creates the file (and its directory) private to this user before SQLite first opens it. */
function createPrivateFile(path: string): void {
  if (path === ':memory:' || existsSync(path)) return;
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
}

/**
 * SQLite gives -wal and -shm the database file's mode, but a file created by an older version or
 * copied in by an operator may be wider: bring all three back to 0600.
 */
function tightenModes(path: string): void {
  if (path === ':memory:') return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}
