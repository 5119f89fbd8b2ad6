import { createHash } from 'node:crypto';
import type pg from 'pg';
import {
  type Connection,
  type Dialect,
  type Params,
  type ReadOptions,
  type RowsInsert,
  type Sql,
} from '../sql.js';
import { nestingCheck } from '../nesting-check.js';
import { postgresError } from './errors.js';
import { valuesStatements } from './insert-values.js';

/** The PostgreSQL dialect: jsonb operators, and row locks on rows a transaction rewrites. */
export const POSTGRES_DIALECT: Dialect = {
  engine: 'postgres',
  jsonMemberIsObject: (column, member) => `jsonb_typeof(${column} -> '${member}') = 'object'`,
  forUpdate: ' FOR UPDATE',
  isAnyJsonStorable: false,
};

/** An open PostgreSQL mirror: the pool, and the URL without a password. */
export interface PostgresConnection extends Connection {
  readonly engine: 'postgres';
  readonly pool: pg.Pool;
  /** A client of its own, outside the pool (a session that must outlive transactions). */
  newClient(): pg.Client;
}

interface Compiled {
  name: string;
  text: string;
  names: string[];
}

/**
 * `@name` parameters as `$1, $2...` (the same name, the same number), outside quoted text. Each
 * statement gets a stable name, so every connection prepares it once.
 */
function compile(text: string): Compiled {
  const names: string[] = [];
  let out = '';
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quote) {
      out += char;
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      out += char;
      continue;
    }
    const match = char === '@' ? /^@([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i)) : null;
    if (!match) {
      out += char;
      continue;
    }
    let index = names.indexOf(match[1]!);
    if (index < 0) index = names.push(match[1]!) - 1;
    out += `$${index + 1}`;
    i += match[0].length - 1;
  }
  const name = `m_${createHash('sha1').update(out).digest('hex').slice(0, 20)}`;
  return { name, text: out, names };
}

/** Runs statements on one client of the pool. */
function clientSql(client: pg.PoolClient | pg.Pool, compiled: Map<string, Compiled>): Sql {
  const query = async <T>(text: string, params?: Params) => {
    let statement = compiled.get(text);
    if (!statement) {
      statement = compile(text);
      compiled.set(text, statement);
    }
    const values = params as Record<string, unknown> | undefined;
    const result = await client.query({
      name: statement.name,
      text: statement.text,
      values: statement.names.map((name) => values?.[name] ?? null),
    });
    return result as pg.QueryResult & { rows: T[] };
  };
  return {
    dialect: POSTGRES_DIALECT,
    async all<T>(text: string, params?: Params) {
      return (await query<T>(text, params)).rows;
    },
    async get<T>(text: string, params?: Params) {
      return (await query<T>(text, params)).rows[0];
    },
    async run(text: string, params?: Params) {
      return (await query(text, params)).rowCount ?? 0;
    },
    async insertRows<T>(into: RowsInsert, rows: readonly object[]) {
      const returned: T[] = [];
      for (const statement of valuesStatements(into, rows)) {
        const result = await client.query<T & pg.QueryResultRow>(statement);
        for (const row of result.rows) returned.push(row);
      }
      return returned;
    },
  };
}

/**
 * Wraps a pool. A transaction takes a client of its own for its whole length, so transactions
 * of one process run side by side, each isolated from the others by the server.
 */
export function postgresConnection(
  pool: pg.Pool,
  location: string,
  newClient: () => pg.Client,
): PostgresConnection {
  const compiled = new Map<string, Compiled>();
  const nesting = nestingCheck();
  const withClient = async <T>(
    begin: string | null,
    work: (sql: Sql) => Promise<T>,
  ): Promise<T> => {
    nesting.refuseIfInside();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw postgresError(error, location);
    }
    let isBroken = false;
    try {
      return await nesting.inside(async () => {
        if (begin) await client.query(begin);
        try {
          const result = await work(clientSql(client, compiled));
          if (begin) await client.query('COMMIT');
          return result;
        } catch (error) {
          if (begin) await client.query('ROLLBACK').catch(() => (isBroken = true));
          throw error;
        }
      });
    } catch (error) {
      throw postgresError(error, location);
    } finally {
      client.release(isBroken);
    }
  };
  const readOne = <T>(text: string, params: Params) =>
    withClient(null, (sql) => sql.get<T>(text, params));
  return {
    engine: 'postgres',
    dialect: POSTGRES_DIALECT,
    location,
    pool,
    newClient,
    transaction: (work) => withClient('BEGIN', work),
    read: <T>(work: (sql: Sql) => Promise<T>, options?: ReadOptions) =>
      withClient(
        options?.isSnapshot ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : null,
        work,
      ),
    async hasTable(name) {
      const row = await readOne(
        `SELECT 1 AS found FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_name = @name`,
        { name },
      );
      return row !== undefined;
    },
    async hasColumn(table, column) {
      const row = await readOne(
        `SELECT 1 AS found FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = @table AND column_name = @column`,
        { table, column },
      );
      return row !== undefined;
    },
    async close() {
      await pool.end();
    },
  };
}
