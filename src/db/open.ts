import { existsSync } from 'node:fs';
import { TransportError } from '../errors.js';
import { knownMigrations } from './migrations.js';
import type { Connection } from './sql.js';
import { appliedMigrations, openSqlite } from './sqlite/open.js';
import type { SqliteConnection } from './sqlite/connection.js';

/** An open mirror database. */
export type MirrorDb = SqliteConnection;

/** How to open the mirror. */
export interface OpenOptions {
  /** TRANSPORT_DB: a file path. */
  path: string;
  /** Apply pending migrations (the daemon and `migrate` do; `status` only reads). */
  shouldMigrate?: boolean;
  isReadOnly?: boolean;
  busyTimeoutMs?: number;
}

/** Opens the mirror, migrating it unless told not to; refuses one a newer version wrote. */
export async function openDatabase(options: OpenOptions): Promise<MirrorDb> {
  return openSqlite(options);
}

/** The number of migrations applied to this database (0 for a new one). */
export async function schemaVersion(db: MirrorDb): Promise<number> {
  return appliedMigrations(db.sqlite).count;
}

/** How many migrations this version knows for the database's engine. */
export function knownSchemaVersion(db: Connection): number {
  return knownMigrations(db.engine).length;
}

/** Refuses a database whose schema is behind this version's (run `migrate` first). */
export async function requireMigrated(db: MirrorDb): Promise<void> {
  const applied = await schemaVersion(db);
  const known = knownSchemaVersion(db);
  if (applied < known) {
    throw new TransportError({
      code: 'db.not_migrated',
      message: `the database ${db.location} has schema version ${applied}; this version needs ${known}`,
      hint: 'Run `transport-sync migrate` (the daemon also migrates at start), then try again.',
    });
  }
}

/**
 * Throws `db.missing` when no database file exists at `path`. The operator tools (status, backup,
 * prune, doctor) must not create an empty database where they expected the daemon's: that would
 * hide a wrong TRANSPORT_DB behind an empty, "stale" mirror.
 */
export function requireDatabaseFile(path: string): void {
  if (path !== ':memory:' && existsSync(path)) return;
  throw new TransportError({
    code: 'db.missing',
    message: `no database at ${path}`,
    hint: 'Check TRANSPORT_DB (or --db); `transport-sync migrate` creates the database, and the daemon (`transport-sync run`) creates and fills it.',
  });
}

/** Opens an existing database read-only: no migration, no pragma that writes, no mode change. */
export async function openForReading(path: string): Promise<MirrorDb> {
  requireDatabaseFile(path);
  return openDatabase({ path, isReadOnly: true, shouldMigrate: false });
}

/**
 * Opens an existing database for writing without migrating it, and refuses one whose schema is
 * behind this version's: pruning or repairing half-migrated tables could go wrong silently.
 */
export async function openMigratedForWriting(path: string): Promise<MirrorDb> {
  requireDatabaseFile(path);
  const db = await openDatabase({ path, shouldMigrate: false });
  try {
    await requireMigrated(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
