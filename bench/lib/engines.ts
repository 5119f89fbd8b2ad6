/**
 * The two engines the bench measures, behind one harness: fresh databases, and templates that
 * hand out fresh copies of a filled one (a file copy on SQLite, CREATE DATABASE ... TEMPLATE on
 * PostgreSQL), so that every run of a path and of its floor starts from the same rows.
 *
 * PostgreSQL: the server of TRANSPORT_BENCH_DATABASE_URL, else TRANSPORT_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres. Every database made here is named tsbench_<pid>_...
 * and dropped when done (and at the end of the run, whatever is left). When no server answers,
 * the PostgreSQL figures are reported as not measured, with the reason.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type MirrorDb } from '../../src/db/open.js';

export type EngineName = 'sqlite' | 'postgres';

/** A database of the bench's own. */
export interface BenchDb {
  engine: EngineName;
  /** TRANSPORT_DB for it: a file path or a postgres:// URL. */
  location: string;
  /** Opens it (migrated); the bench's own connection, closed by `close` or `remove`. */
  open(): Promise<MirrorDb>;
  /** Closes the bench's connection; the database stays. */
  close(): Promise<void>;
  /** Closes what `open` opened and throws the database away. */
  remove(): Promise<void>;
}

/** A filled database that fresh copies are made from. */
export interface DbTemplate {
  clone(): Promise<BenchDb>;
  remove(): Promise<void>;
}

/** One engine: where its databases come from. */
export interface EngineHarness {
  name: EngineName;
  /** A fresh database, migrated and empty (not opened yet). */
  create(): Promise<BenchDb>;
  /** Turns a database into a template (closing the bench's connection to it). */
  template(db: BenchDb): Promise<DbTemplate>;
  close(): Promise<void>;
}

/** The engines of a run: those that can be measured, and why the others cannot. */
export interface Engines {
  available: EngineHarness[];
  /** Engines asked for that cannot be measured here, with the reason. */
  unavailable: Partial<Record<EngineName, string>>;
  get(name: EngineName): EngineHarness | undefined;
  close(): Promise<void>;
}

function tempPath(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-'));
  return { dir, path: join(dir, 'mirror.db') };
}

/** Wraps a location: opens at most one connection, closes it and runs `drop` on remove. */
function benchDb(engine: EngineName, location: string, drop: () => Promise<void>): BenchDb {
  let opened: Promise<MirrorDb> | undefined;
  const close = async () => {
    const db = opened;
    opened = undefined;
    await (await db)?.close();
  };
  return {
    engine,
    location,
    open() {
      opened ??= openDatabase({ location });
      return opened;
    },
    close,
    async remove() {
      await close().catch(() => undefined);
      await drop();
    },
  };
}

/** SQLite: files in temporary directories. */
export function sqliteEngine(): EngineHarness {
  const sqliteDb = (): BenchDb => {
    const { dir, path } = tempPath();
    return benchDb('sqlite', path, async () => rmSync(dir, { recursive: true, force: true }));
  };
  return {
    name: 'sqlite',
    async create() {
      const db = sqliteDb();
      // Created and migrated now, so that a child process or a timed path finds it ready.
      await db.open();
      return db;
    },
    async template(db) {
      const conn = await db.open();
      if (conn.engine !== 'sqlite') throw new Error('not a SQLite database');
      conn.sqlite.pragma('wal_checkpoint(TRUNCATE)');
      await db.close();
      const file = db.location;
      return {
        async clone() {
          const copy = sqliteDb();
          copyFileSync(file, copy.location);
          await copy.open();
          return copy;
        },
        remove: () => db.remove(),
      };
    },
    async close() {},
  };
}

/** The PostgreSQL server to use, from the environment or this project's default. */
export function postgresServerUrl(): string {
  return (
    process.env.TRANSPORT_BENCH_DATABASE_URL?.trim() ||
    process.env.TRANSPORT_TEST_DATABASE_URL?.trim() ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

const hidePassword = (url: string) => url.replace(/:[^:@/]*@/, ':***@');

async function postgresHarness(serverUrl: string): Promise<EngineHarness> {
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await admin.connect();
  admin.on('error', () => undefined);
  const made = new Set<string>();
  const prefix = `tsbench_${process.pid}_`;
  const urlOf = (database: string) => {
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    return url.toString();
  };
  // One statement at a time on the admin connection.
  let queue: Promise<unknown> = Promise.resolve();
  const adminQuery = (text: string) => {
    const turn = queue.then(() => admin.query(text));
    queue = turn.catch(() => undefined);
    return turn;
  };
  const drop = async (database: string) => {
    await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    made.delete(database);
  };
  const make = async (template?: string): Promise<string> => {
    const database = `${prefix}${randomBytes(4).toString('hex')}`;
    await adminQuery(
      `CREATE DATABASE ${database}${template ? ` TEMPLATE ${template}` : ''} ENCODING 'UTF8'`,
    );
    made.add(database);
    return database;
  };
  const pgDb = (database: string) => benchDb('postgres', urlOf(database), () => drop(database));

  // An empty migrated database that fresh ones are copied from: migrating once is enough.
  const empty = await make();
  const emptyConn = await openDatabase({ location: urlOf(empty) });
  await emptyConn.close();

  return {
    name: 'postgres',
    async create() {
      return pgDb(await make(empty));
    },
    async template(db) {
      // CREATE DATABASE ... TEMPLATE needs the template without sessions: close ours.
      await db.close();
      const database = new URL(db.location).pathname.slice(1);
      return {
        async clone() {
          return pgDb(await make(database));
        },
        remove: () => drop(database),
      };
    },
    async close() {
      for (const database of [...made]) await drop(database).catch(() => undefined);
      await admin.end().catch(() => undefined);
    },
  };
}

/** The harnesses of the engines asked for; a PostgreSQL server that does not answer is noted. */
export async function openEngines(names: readonly EngineName[]): Promise<Engines> {
  const available: EngineHarness[] = [];
  const unavailable: Partial<Record<EngineName, string>> = {};
  for (const name of names) {
    if (name === 'sqlite') available.push(sqliteEngine());
    else {
      const url = postgresServerUrl();
      try {
        available.push(await postgresHarness(url));
      } catch (error) {
        unavailable.postgres = `no PostgreSQL server to measure on at ${hidePassword(url)} (${(error as Error).message}); set TRANSPORT_BENCH_DATABASE_URL`;
      }
    }
  }
  return {
    available,
    unavailable,
    get: (name) => available.find((engine) => engine.name === name),
    async close() {
      for (const engine of available) await engine.close();
    },
  };
}
