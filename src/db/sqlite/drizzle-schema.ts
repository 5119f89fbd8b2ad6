import { sql } from 'drizzle-orm';
import {
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  type AnySQLiteColumn,
  type SQLiteColumnBuilderBase,
} from 'drizzle-orm/sqlite-core';
import { TABLES, type Column, type Table } from '../schema/index.js';

/*
 * The drizzle tables for SQLite, built from the table descriptions: drizzle-kit reads them to
 * generate drizzle/sqlite/ (see drizzle.config.ts). SQLite keeps timestamps and dates as ISO
 * text, booleans as INTEGER 0/1 and JSON as text.
 */

const NOW = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

function sqliteColumn(
  name: string,
  spec: Column,
  byName: Map<string, Record<string, AnySQLiteColumn>>,
) {
  let built;
  switch (spec.kind) {
    case 'id':
      return integer(name).primaryKey({ autoIncrement: true });
    case 'integer':
    case 'boolean':
      built = integer(name);
      break;
    case 'real':
      built = real(name);
      break;
    default:
      built = text(name);
  }
  if (spec.isPrimaryKey) built = built.primaryKey();
  if (spec.isNotNull && !spec.isPrimaryKey) built = built.notNull();
  if (spec.defaultValue !== undefined)
    built = built.default(spec.defaultValue === 'now' ? NOW : (spec.defaultValue as never));
  const fk = spec.foreignKey;
  if (fk)
    built = built.references(() => byName.get(fk.table)![fk.column]!, { onDelete: 'cascade' });
  return built as SQLiteColumnBuilderBase;
}

function sqliteTableOf(t: Table, byName: Map<string, Record<string, AnySQLiteColumn>>) {
  const columns = Object.fromEntries(
    Object.entries(t.columns).map(([name, spec]) => [name, sqliteColumn(name, spec, byName)]),
  );
  const built = sqliteTable(t.name, columns, (table) => {
    const cols = table as unknown as Record<string, AnySQLiteColumn>;
    return [
      ...(t.primaryKey
        ? [primaryKey({ columns: t.primaryKey.map((name) => cols[name]!) as [AnySQLiteColumn] })]
        : []),
      ...Object.entries({ ...t.indexes, ...t.sqliteIndexes }).map(([indexName, on]) =>
        index(indexName).on(...(on.map((name) => cols[name]!) as [AnySQLiteColumn])),
      ),
    ];
  });
  byName.set(t.name, built as unknown as Record<string, AnySQLiteColumn>);
  return built;
}

/** Every table as a drizzle SQLite table, by table name. */
export function sqliteTables() {
  const byName = new Map<string, Record<string, AnySQLiteColumn>>();
  return Object.fromEntries(TABLES.map((t) => [t.name, sqliteTableOf(t, byName)]));
}

// drizzle-kit finds tables among a module's exports: every table, by its SQL name.
export const {
  requests,
  request_locations,
  accounts,
  facilities,
  request_fields,
  request_changes,
  sync_runs,
  quarantine,
  schema_drift,
  intake_gaps,
  sync_state,
  webhook_events,
  outbox_locations,
  outbox_actions,
  backfill_windows,
  request_profiles,
} = sqliteTables();
