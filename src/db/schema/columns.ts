/*
 * The one description of every table: its columns with an engine-neutral kind, its keys and
 * indexes. From it derive the drizzle tables that drizzle-kit turns into each engine's migrations
 * (db/sqlite/drizzle-schema.ts, db/postgres/drizzle-schema.ts), the row types the code uses, and
 * the column lists the statements are built from. Column names are the SQL names, snake_case,
 * because reporting tools query them as they are.
 *
 * Values as the code sees them, on either engine: text, timestamps (canonical ISO UTC with
 * milliseconds), dates (YYYY-MM-DD) and JSON (its text) as strings; integers and reals as
 * numbers; booleans as 1, 0 or null. Each engine stores them in its natural type (see
 * docs/database.md); the connection converts.
 */

/** Engine-neutral column kinds. */
export type ColumnKind =
  | 'text'
  | 'timestamp'
  | 'date'
  | 'json'
  | 'integer'
  | 'real'
  | 'boolean'
  /** An integer key the database assigns (autoincrement, identity). */
  | 'id';

/** A column: its kind, nullability, default and key role. */
export interface Column<K extends ColumnKind = ColumnKind, IsNotNull extends boolean = boolean> {
  readonly kind: K;
  readonly isNotNull: IsNotNull;
  readonly isPrimaryKey: boolean;
  /** A constant, or 'now' for the time of the insert. */
  readonly defaultValue?: number | string | 'now';
  /** A foreign key to `table`.`column`, deleting this row with its parent. */
  readonly foreignKey?: { table: string; column: string };
}

/** A column under construction: every step returns a new description. */
export interface ColumnBuilder<K extends ColumnKind, N extends boolean> extends Column<K, N> {
  notNull(): ColumnBuilder<K, true>;
  primaryKey(): ColumnBuilder<K, true>;
  default(value: number | string | 'now'): ColumnBuilder<K, N>;
  references(table: string, column: string): ColumnBuilder<K, N>;
}

function column<K extends ColumnKind, N extends boolean>(spec: Column<K, N>): ColumnBuilder<K, N> {
  const description: Column<K, N> = {
    kind: spec.kind,
    isNotNull: spec.isNotNull,
    isPrimaryKey: spec.isPrimaryKey,
    ...(spec.defaultValue !== undefined && { defaultValue: spec.defaultValue }),
    ...(spec.foreignKey && { foreignKey: spec.foreignKey }),
  };
  return {
    ...description,
    notNull: () => column({ ...description, isNotNull: true }),
    primaryKey: () => column({ ...description, isNotNull: true, isPrimaryKey: true }),
    default: (value) => column({ ...description, defaultValue: value }),
    references: (table, ref) => column({ ...description, foreignKey: { table, column: ref } }),
  };
}

const of = <K extends ColumnKind>(kind: K) =>
  column<K, false>({ kind, isNotNull: false, isPrimaryKey: false });

/** Column constructors, one per kind. */
export const c = {
  text: () => of('text'),
  timestamp: () => of('timestamp'),
  date: () => of('date'),
  json: () => of('json'),
  integer: () => of('integer'),
  real: () => of('real'),
  boolean: () => of('boolean'),
  id: () => column<'id', true>({ kind: 'id', isNotNull: true, isPrimaryKey: true }),
};

/** The columns of a table, by SQL name, in table order. */
export type Columns = Record<string, Column>;

/** A table: name, columns, a composite primary key when there is one, and named indexes. */
export interface Table<C extends Columns = Columns> {
  readonly name: string;
  readonly columns: C;
  readonly primaryKey?: readonly string[];
  readonly indexes: Readonly<Record<string, readonly string[]>>;
  /** Indexes only SQLite builds: where its row layout, not the query, calls for one. */
  readonly sqliteIndexes: Readonly<Record<string, readonly string[]>>;
}

/** Declares a table. */
export function table<C extends Columns>(
  name: string,
  columns: C,
  keys: {
    primaryKey?: readonly (keyof C & string)[];
    indexes?: Record<string, readonly (keyof C & string)[]>;
    sqliteIndexes?: Record<string, readonly (keyof C & string)[]>;
  } = {},
): Table<C> {
  return {
    name,
    columns,
    primaryKey: keys.primaryKey,
    indexes: keys.indexes ?? {},
    sqliteIndexes: keys.sqliteIndexes ?? {},
  };
}

type ValueOf<K extends ColumnKind> = K extends 'integer' | 'real' | 'boolean' | 'id'
  ? number
  : string;

/** A row of a table as the code reads and writes it. */
export type RowOf<T extends Table> = {
  -readonly [K in keyof T['columns']]: T['columns'][K] extends Column<infer Kind, infer N>
    ? N extends true
      ? ValueOf<Kind>
      : ValueOf<Kind> | null
    : never;
};

/** The SQL names of a table's columns, in table order. */
export function columnNames<T extends Table>(t: T): (keyof T['columns'] & string)[] {
  return Object.keys(t.columns);
}
