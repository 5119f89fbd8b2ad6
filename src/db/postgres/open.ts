import pg from 'pg';
import { postgresLocation } from '../location.js';
import { isBehind, migrationsFolder, refuseNewer, type AppliedMigrations } from '../migrations.js';
import { postgresConnection, type PostgresConnection } from './connection.js';
import { postgresError } from './errors.js';
import { MIRROR_TYPES } from './types.js';

/** How to open a PostgreSQL mirror. */
export interface PostgresOpenOptions {
  /** postgres://user@host:port/database (no password: see `password`). */
  url: string;
  /** The role's password, read from a file or credential; undefined leaves it to PGPASSFILE. */
  password?: string;
  /** Apply pending migrations (the daemon and `migrate` do; `status` only reads). */
  shouldMigrate?: boolean;
  isReadOnly?: boolean;
  /** Connections the process may hold (transactions in flight at once). */
  maxConnections?: number;
}

/** Advisory lock key under which one process at a time migrates a shared database. */
const MIGRATION_LOCK = 7_461_019_001;

/**
 * Opens a pool on the mirror's database: every session in UTC with ISO dates (the type parsers
 * rely on it), named `transport-sync` in pg_stat_activity, kept alive over idle stretches.
 * Migrates under an advisory lock, so several daemons starting together migrate once; refuses
 * a database a newer version migrated.
 */
export async function openPostgres({
  url,
  password,
  shouldMigrate = true,
  isReadOnly = false,
  maxConnections = 10,
}: PostgresOpenOptions): Promise<PostgresConnection> {
  const location = postgresLocation(url);
  const options = ['-c TimeZone=UTC', '-c DateStyle=ISO'];
  if (isReadOnly) options.push('-c default_transaction_read_only=on');
  const clientConfig: pg.ClientConfig = {
    connectionString: withPassword(url, password),
    options: options.join(' '),
    application_name: 'transport-sync',
    types: MIRROR_TYPES,
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
  };
  const pool = new pg.Pool({
    ...clientConfig,
    Client: ClosingClient,
    max: maxConnections,
    idleTimeoutMillis: 30_000,
  });
  // An idle client whose server went away must not crash the process: the next query reports it.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    try {
      // An up-to-date database (every start but the first after an upgrade) is told by one
      // statement. The lock is taken only when it is behind, and the check made again under it:
      // drizzle records a migration in the transaction that applies it, so what the read
      // without the lock saw as up to date is committed.
      const applied = await appliedPostgresMigrations(client);
      refuseNewer(applied, 'postgres', location);
      if (shouldMigrate && !isReadOnly && isBehind(applied, 'postgres')) {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
        try {
          const locked = await appliedPostgresMigrations(client);
          refuseNewer(locked, 'postgres', location);
          if (isBehind(locked, 'postgres')) await migrate(client);
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
        }
      }
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw postgresError(error, location);
  }
  return postgresConnection(pool, location, () => new pg.Client(clientConfig));
}

/**
 * A client that closes its socket when connecting fails. pg leaves it open when the client
 * itself gives up while authenticating (it has no password to answer the server's challenge):
 * the server then waits out its authentication_timeout, a minute, and a command that has
 * reported the error cannot exit until then.
 *
 * Ended by the pool, its socket no longer keeps the process alive. The pool ends a client with
 * a callback that only tells the pool's listeners, and `pool.end()` has resolved by then; the
 * server closes the socket once its backend has exited, 15 to 30 ms later, which a command that
 * has done its work (a `sync` from the timer) otherwise waited out before it could exit.
 */
export class ClosingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    type Callback = (error: Error | null) => void;
    const connect = this.connect.bind(this) as (callback: Callback) => void;
    const socket = () =>
      (this as unknown as { connection?: { stream?: { destroy(): void; unref?(): void } } })
        .connection?.stream;
    const closeSocket = () => socket()?.destroy();
    const end = this.end.bind(this) as (callback?: () => void) => Promise<void> | void;
    this.end = ((callback?: () => void) => {
      const ending = end(callback);
      if (callback) socket()?.unref?.();
      return ending;
    }) as pg.Client['end'];
    const closing = (callback?: Callback): Promise<pg.Client> | void => {
      if (!callback) {
        return new Promise((resolve, reject) =>
          closing((error) => (error ? reject(error) : resolve(this))),
        );
      }
      connect((error) => {
        if (error) closeSocket();
        callback(error);
      });
    };
    this.connect = closing as pg.Client['connect'];
  }
}

/**
 * The connection string with the role's password in it. pg lets each field of a connection
 * string override the config beside it, the empty password of a URL without one included: a
 * password passed beside such a URL is never sent, and a server that asks for one refuses.
 */
export function withPassword(url: string, password: string | undefined): string {
  if (password === undefined) return url;
  const parsed = new URL(url);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/**
 * Applies the pending migrations. As on SQLite, drizzle's migrator is loaded only when the
 * database is behind: an up-to-date one (every start but the first after an upgrade) costs two
 * statements under the lock, not drizzle's modules, its read of every migration file and its
 * transaction.
 */
async function migrate(client: pg.PoolClient): Promise<void> {
  const [{ drizzle }, { migrate: applyMigrations }] = await Promise.all([
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
  ]);
  await applyMigrations(drizzle({ client }), { migrationsFolder: migrationsFolder('postgres') });
}

/**
 * How many migrations a database has applied, and the newest one's time: one statement, a
 * round trip at every command's start. A database no migration touched has no drizzle table yet,
 * which the server answers with undefined_table (42P01); outside a transaction that error aborts
 * nothing.
 */
export async function appliedPostgresMigrations(
  client: pg.ClientBase | pg.Pool,
): Promise<AppliedMigrations> {
  try {
    const row = await client.query(
      'SELECT count(*) AS n, max(created_at) AS at FROM drizzle.__drizzle_migrations',
    );
    return {
      count: Number(row.rows[0].n),
      newestAt: row.rows[0].at === null ? null : Number(row.rows[0].at),
    };
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return { count: 0, newestAt: null };
    throw error;
  }
}

/** SQLSTATE of a relation that does not exist (the schema `drizzle` missing included). */
const UNDEFINED_TABLE = '42P01';
