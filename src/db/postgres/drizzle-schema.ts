import {
  bigint,
  boolean,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  type AnyPgColumn,
  type PgColumnBuilderBase,
} from 'drizzle-orm/pg-core';
import { TABLES, type Column, type Table } from '../schema/index.js';

/*
 * The drizzle tables for PostgreSQL, built from the table descriptions: drizzle-kit reads them to
 * generate drizzle/postgres/ (see drizzle-postgres.config.ts). Each kind in PostgreSQL's natural
 * type: timestamptz, date, boolean, jsonb, double precision, integer, and bigint identities.
 */

type Columns = Record<string, AnyPgColumn>;

function pgColumn(name: string, spec: Column, byName: Map<string, Columns>) {
  let built;
  switch (spec.kind) {
    case 'id':
      // By default, not always: `copy` moves rows with their ids, then moves the sequence on.
      return bigint(name, { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity();
    case 'integer':
      built = integer(name);
      break;
    case 'boolean':
      built = boolean(name);
      break;
    case 'real':
      built = doublePrecision(name);
      break;
    case 'timestamp':
      built = timestamp(name, { withTimezone: true, mode: 'string', precision: 3 });
      break;
    case 'date':
      built = date(name, { mode: 'string' });
      break;
    case 'json':
      built = jsonb(name);
      break;
    default:
      built = text(name);
  }
  if (spec.isPrimaryKey) built = built.primaryKey();
  if (spec.isNotNull && !spec.isPrimaryKey) built = built.notNull();
  const value = spec.defaultValue;
  if (value === 'now') built = (built as unknown as ReturnType<typeof timestamp>).defaultNow();
  else if (value !== undefined)
    built = built.default((spec.kind === 'boolean' ? value === 1 : value) as never);
  const fk = spec.foreignKey;
  if (fk)
    built = built.references(() => byName.get(fk.table)![fk.column]!, { onDelete: 'cascade' });
  return built as PgColumnBuilderBase;
}

function pgTableOf(t: Table, byName: Map<string, Columns>) {
  const columns = Object.fromEntries(
    Object.entries(t.columns).map(([name, spec]) => [name, pgColumn(name, spec, byName)]),
  );
  const built = pgTable(t.name, columns, (table) => {
    const cols = table as unknown as Columns;
    return [
      ...(t.primaryKey
        ? [primaryKey({ columns: t.primaryKey.map((name) => cols[name]!) as [AnyPgColumn] })]
        : []),
      ...Object.entries(t.indexes).map(([indexName, on]) =>
        index(indexName).on(...(on.map((name) => cols[name]!) as [AnyPgColumn])),
      ),
    ];
  });
  byName.set(t.name, built as unknown as Columns);
  return built;
}

/** Every table as a drizzle PostgreSQL table, by table name. */
export function postgresTables() {
  const byName = new Map<string, Columns>();
  return Object.fromEntries(TABLES.map((t) => [t.name, pgTableOf(t, byName)]));
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
} = postgresTables();
