import { existsSync, readFileSync } from 'node:fs';
import { TransportError } from '../errors.js';
import { knownMigrations } from './migrations.js';
import type { PostgresConnection } from './postgres/connection.js';
import { isPostgresLocation } from './location.js';
import type { Connection } from './sql.js';
import type { SqliteConnection } from './sqlite/connection.js';

/** An open mirror database, on either engine. */
export type MirrorDb = SqliteConnection | PostgresConnection;

/** Where the mirror is: TRANSPORT_DB, and where a PostgreSQL password is read from. */
export interface DatabaseTarget {
  /** A SQLite file path, or a postgres:// URL without a password. */
  location: string;
  /** A file holding the PostgreSQL role's password (TRANSPORT_DB_PASSWORD_FILE, a credential). */
  passwordFile?: string;
}

/** How to open the mirror. */
export interface OpenOptions extends DatabaseTarget {
  /** Apply pending migrations (the daemon and `migrate` do; `status` only reads). */
  shouldMigrate?: boolean;
  isReadOnly?: boolean;
  busyTimeoutMs?: number;
  /**
   * Create the SQLite file's folder when it does not exist (`migrate` does). Otherwise a folder
   * that does not exist is refused: a mistyped TRANSPORT_DB must not start a second, empty mirror.
   */
  mayCreateFolder?: boolean;
  /** PostgreSQL connections the process may hold at once (see `ONE_SHOT_CONNECTIONS`). */
  maxConnections?: number;
}

/**
 * The PostgreSQL connections of a command that runs once and exits (`sync`, an action). Each
 * connection is a server process of its own, which maps the shared buffers it reads and loads
 * the catalog again: on the machines measured, its first read of the requests took 15 ms against
 * 1.6 ms on a connection that had read them before. A command is over before a second
 * connection pays that back, and it never needs one: its transactions wait their turn. The daemon
 * keeps its pool, whose connections stay warm.
 */
export const ONE_SHOT_CONNECTIONS = 1;

/** The PostgreSQL side, loaded only for a postgres:// mirror: a SQLite install never loads pg. */
const postgres = () => import('./postgres/open.js');
/** The SQLite side, loaded only for a SQLite mirror: a PostgreSQL one never loads better-sqlite3. */
const sqlite = () => import('./sqlite/open.js');

/** Opens the mirror, migrating it unless told not to; refuses one a newer version wrote. */
export async function openDatabase(options: OpenOptions): Promise<MirrorDb> {
  if (!isPostgresLocation(options.location)) {
    const { openSqlite } = await sqlite();
    return openSqlite({ ...options, path: options.location });
  }
  const { openPostgres } = await postgres();
  return openPostgres({
    url: options.location,
    password: readPasswordFile(options.passwordFile),
    shouldMigrate: options.shouldMigrate,
    isReadOnly: options.isReadOnly,
    maxConnections: options.maxConnections,
  });
}

/** The password from its file, trimmed; undefined without a file (PGPASSFILE decides then). */
export function readPasswordFile(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new TransportError({
      code: 'db.open_failed',
      message: `cannot read the database password file ${file} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      hint: 'Check TRANSPORT_DB_PASSWORD_FILE (or the credential db_password) and that this user may read it.',
      cause: error,
    });
  }
}

/** The number of migrations applied to this database (0 for a new one). */
export async function schemaVersion(db: MirrorDb): Promise<number> {
  if (db.engine === 'sqlite') {
    const { appliedMigrations } = await sqlite();
    return appliedMigrations(db.sqlite).count;
  }
  const { appliedPostgresMigrations } = await postgres();
  return (await appliedPostgresMigrations(db.pool)).count;
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
 * hide a wrong TRANSPORT_DB behind an empty, "stale" mirror. (A PostgreSQL database exists or
 * the connection says otherwise.)
 */
export function requireDatabaseFile(path: string): void {
  if (isPostgresLocation(path) || path === ':memory:' || existsSync(path)) return;
  throw new TransportError({
    code: 'db.missing',
    message: `no database at ${path}`,
    hint: 'Check TRANSPORT_DB (or --db); `transport-sync migrate` creates the database, and the daemon (`transport-sync run`) creates and fills it.',
  });
}

/** Opens an existing database read-only: no migration, no pragma that writes, no mode change. */
export async function openForReading(target: DatabaseTarget): Promise<MirrorDb> {
  requireDatabaseFile(target.location);
  return openDatabase({ ...target, isReadOnly: true, shouldMigrate: false });
}

/**
 * Opens an existing database for writing without migrating it, and refuses one whose schema is
 * behind this version's: pruning or repairing half-migrated tables could go wrong silently.
 */
export async function openMigratedForWriting(target: DatabaseTarget): Promise<MirrorDb> {
  requireDatabaseFile(target.location);
  const db = await openDatabase({ ...target, shouldMigrate: false });
  try {
    await requireMigrated(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

/** The database target a configuration names. */
export function targetOf(config: { dbPath: string; dbPasswordFile?: string }): DatabaseTarget {
  return {
    location: config.dbPath,
    ...(config.dbPasswordFile !== undefined && { passwordFile: config.dbPasswordFile }),
  };
}
