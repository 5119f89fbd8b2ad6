/*
 * The narrow interface every statement of the mirror goes through, whichever the engine. SQL is
 * written once, with named parameters (`@name`), in the subset SQLite and PostgreSQL share; the
 * few places that differ ask `dialect`. SQLite answers synchronously under the hood (the
 * promises are already settled), so the one code path costs it next to nothing.
 */

/** The database engines the mirror runs on. */
export type Engine = 'sqlite' | 'postgres';

/** Named parameters of a statement: `@name` in the SQL. */
export type Params = object;

/**
 * An INSERT of rows: the table, the columns each row gives as members of those names, and what
 * a row whose key is taken does (`ON CONFLICT ...`), if anything.
 */
export interface RowsInsert {
  readonly table: string;
  readonly columns: readonly string[];
  readonly onConflict?: string;
  /** What each inserted (or updated) row gives back (`RETURNING ...`), if anything. */
  readonly returning?: string;
  /**
   * A column's value as SQL around its parameter, written `?`, where the server computes it from
   * what the row gives (a lookup, say); the others are their parameter as given.
   */
  readonly valueSql?: Readonly<Record<string, string>>;
}

/** The value of `column` in an INSERT of `into`, its parameter written `parameter`. */
export const valueOf = (into: RowsInsert, column: string, parameter: string): string =>
  into.valueSql?.[column]?.replace('?', parameter) ?? parameter;

/** Runs statements on one connection (inside a transaction, when it came from one). */
export interface Sql {
  readonly dialect: Dialect;
  /** Every row. */
  all<T>(text: string, params?: Params): Promise<T[]>;
  /** The first row, or undefined. */
  get<T>(text: string, params?: Params): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(text: string, params?: Params): Promise<number>;
  /**
   * Inserts `rows`, in order, each giving every one of `into.columns`, several to a statement
   * (sqlite/insert-shapes.ts, postgres/insert-values.ts). Resolves to what `into.returning`
   * gives back for them (nothing without it).
   */
  insertRows<T = Record<string, unknown>>(into: RowsInsert, rows: readonly object[]): Promise<T[]>;
}

/** The single-row INSERT of `into`, with named parameters. */
export const insertOneSql = (into: RowsInsert): string =>
  `INSERT INTO ${into.table} (${into.columns.join(', ')}) VALUES (${into.columns
    .map((c) => valueOf(into, c, `@${c}`))
    .join(', ')})${insertTail(into)}`;

/** What follows the VALUES of `into`'s INSERT: its ON CONFLICT and RETURNING clauses. */
export const insertTail = ({ onConflict, returning }: RowsInsert): string =>
  `${onConflict ? ` ${onConflict}` : ''}${returning ? ` RETURNING ${returning}` : ''}`;

/**
 * Runs `work` inside a savepoint of the transaction `sql` belongs to: when it throws, what it
 * wrote is rolled back and the transaction goes on. One request's writes in a batch of many.
 */
export async function withSavepoint<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  // One name: savepoints of one name nest, each RELEASE or ROLLBACK TO meaning the latest, and
  // the statements stay the same three (prepared once).
  await sql.run('SAVEPOINT one_write');
  try {
    const result = await work();
    await sql.run('RELEASE SAVEPOINT one_write');
    return result;
  } catch (error) {
    await sql.run('ROLLBACK TO SAVEPOINT one_write');
    await sql.run('RELEASE SAVEPOINT one_write');
    throw error;
  }
}

/** What an engine says differently. */
export interface Dialect {
  readonly engine: Engine;
  /** SQL that is true when JSON column `column` holds an object at member `member`. */
  jsonMemberIsObject(column: string, member: string): string;
  /** Appended to a SELECT of rows the transaction is about to rewrite (row locks on PostgreSQL). */
  readonly forUpdate: string;
  /**
   * Whether every JSON text can be stored as it is. SQLite's can. PostgreSQL's text cannot hold
   * U+0000 (NUL), and its jsonb refuses that and half of a UTF-16 surrogate pair (see
   * unstorableTextIn).
   */
  readonly isAnyJsonStorable: boolean;
}

/**
 * A \u escape in JSON text of a character PostgreSQL cannot store: NUL (\u0000), or one half of
 * a UTF-16 surrogate pair without the other (a character cut in two, as a truncated emoji is).
 * A whole pair is matched as one, so its low half is never taken for a lone one. `\\u0000` is
 * an escaped backslash followed by "u0000", not an escape.
 */
const UNSTORABLE_ESCAPE =
  /(?<!\\)((?:\\\\)*)\\u(0000|[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|[dD][c-fC-F][0-9a-fA-F]{2})/g;

/** What in JSON text PostgreSQL cannot store: a NUL, or half a surrogate pair. */
export type UnstorableText = 'nul' | 'surrogate';

/** The first character of JSON text's strings that PostgreSQL cannot store, if any. */
export function unstorableTextIn(json: string): UnstorableText | undefined {
  if (!json.includes('\\u')) return undefined;
  for (const match of json.matchAll(UNSTORABLE_ESCAPE)) {
    const code = match[2]!;
    // A whole pair is ten characters ("d83d\ude00"): storable.
    if (code.length === 4) return code === '0000' ? 'nul' : 'surrogate';
  }
  return undefined;
}

/**
 * JSON text whose characters PostgreSQL cannot store read as their escapes (the six characters
 * \u0000, \ud83d): for a copy kept for people to look at (quarantine, a webhook payload).
 */
export function jsonWithUnstorableSpelledOut(json: string): string {
  return json.replace(UNSTORABLE_ESCAPE, (match, backslashes: string, code: string) =>
    code.length === 4 ? `${backslashes}\\\\u${code}` : match,
  );
}

/** Options of a read. */
export interface ReadOptions {
  /** Every statement sees the same moment (a snapshot), e.g. for counts shown side by side. */
  isSnapshot?: boolean;
}

/** An open mirror database, on either engine. */
export interface Connection {
  readonly engine: Engine;
  readonly dialect: Dialect;
  /** Where it is, fit for logs and messages: a file path, or a URL without its password. */
  readonly location: string;
  /**
   * Runs `work` in one write transaction: committed when it resolves, rolled back whole when it
   * throws. Transactions of one process run one at a time on SQLite; never nest them.
   */
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /** Runs `work` with reads only. */
  read<T>(work: (sql: Sql) => Promise<T>, options?: ReadOptions): Promise<T>;
  /** Whether a table exists (read-only tools meet databases that predate a migration). */
  hasTable(name: string): Promise<boolean>;
  /** Whether a table has a column (false when the table does not exist). */
  hasColumn(table: string, column: string): Promise<boolean>;
  close(): Promise<void>;
}
