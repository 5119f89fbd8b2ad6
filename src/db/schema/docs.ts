import type { ColumnKind } from './columns.js';
import { TABLES } from './index.js';

/** Each kind's type on each engine, as the migrations create them. */
export const ENGINE_TYPES: Record<ColumnKind, { sqlite: string; postgres: string }> = {
  text: { sqlite: 'TEXT', postgres: 'text' },
  timestamp: { sqlite: 'TEXT (ISO-8601 UTC)', postgres: 'timestamptz(3)' },
  date: { sqlite: 'TEXT (YYYY-MM-DD)', postgres: 'date' },
  json: { sqlite: 'TEXT (JSON)', postgres: 'jsonb' },
  integer: { sqlite: 'INTEGER', postgres: 'integer' },
  real: { sqlite: 'REAL', postgres: 'double precision' },
  boolean: { sqlite: 'INTEGER (0/1)', postgres: 'boolean' },
  id: { sqlite: 'INTEGER (autoincrement)', postgres: 'bigint (identity)' },
};

/**
 * docs/database.md's table of every column's type on each engine, generated from the table
 * descriptions (npm run build && node scripts/update-docs.mjs).
 */
export function columnTypesMarkdown(): string {
  const rows = TABLES.flatMap((table) =>
    Object.entries(table.columns).map(([name, column]) => {
      const types = ENGINE_TYPES[column.kind];
      const isNotNull = column.isNotNull ? ' not null' : '';
      return `| \`${table.name}\` | \`${name}\` | ${types.sqlite}${isNotNull} | ${types.postgres}${isNotNull} |`;
    }),
  );
  return ['| table | column | SQLite | PostgreSQL |', '| --- | --- | --- | --- |', ...rows].join(
    '\n',
  );
}
