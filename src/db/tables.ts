import type Database from 'better-sqlite3';

/**
 * Whether `name` exists as a table. Read-only callers (status, doctor, metrics) open databases
 * that may predate a migration, or be brand new, and must report rather than fail.
 */
export function hasTable(sqlite: Database.Database, name: string): boolean {
  return (
    sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
    undefined
  );
}

/** Whether `table` has `column` (false when the table does not exist). */
export function hasColumn(sqlite: Database.Database, table: string, column: string): boolean {
  const columns = sqlite.prepare('SELECT name FROM pragma_table_info(?)').all(table) as {
    name: string;
  }[];
  return columns.some((c) => c.name === column);
}
