import type Database from 'better-sqlite3';
import { hasTable } from './tables.js';

/** One sync_state entry. */
export interface SyncStateEntry {
  value: string;
  updated_at: string;
}

/**
 * sync_state: the daemon's small key/value state (last success, heartbeat, owner lease, polling
 * retired). Every statement on the table is here; the keys belong to their users. Callers own
 * write transactions.
 */
export function createSyncStateStore(sqlite: Database.Database) {
  const upsert = sqlite.prepare(
    `INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @updated_at)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const select = sqlite.prepare('SELECT value, updated_at FROM sync_state WHERE key = ?');
  const remove = sqlite.prepare('DELETE FROM sync_state WHERE key = ?');
  const removeIf = sqlite.prepare('DELETE FROM sync_state WHERE key = ? AND value = ?');
  const touchIf = sqlite.prepare(
    'UPDATE sync_state SET updated_at = ? WHERE key = ? AND value = ?',
  );
  return {
    get(key: string): string | undefined {
      return (select.get(key) as SyncStateEntry | undefined)?.value;
    },
    /** The value with the time it was last written. */
    entry(key: string): SyncStateEntry | undefined {
      return select.get(key) as SyncStateEntry | undefined;
    },
    set(key: string, value: string, at: string): void {
      upsert.run({ key, value, updated_at: at });
    },
    delete(key: string): void {
      remove.run(key);
    },
    /** Deletes `key` only while it still holds `value`; returns whether it did. */
    deleteIf(key: string, value: string): boolean {
      return removeIf.run(key, value).changes > 0;
    },
    /** Moves `key`'s updated_at to `at` only while it still holds `value`; returns whether it did. */
    touchIf(key: string, value: string, at: string): boolean {
      return touchIf.run(at, key, value).changes > 0;
    },
  };
}

/** The sync_state store's interface. */
export type SyncStateStore = ReturnType<typeof createSyncStateStore>;

/** Reads one key without writing, for status and doctor: undefined when the table is missing. */
export function readSyncState(sqlite: Database.Database, key: string): SyncStateEntry | undefined {
  if (!hasTable(sqlite, 'sync_state')) return undefined;
  return sqlite.prepare('SELECT value, updated_at FROM sync_state WHERE key = ?').get(key) as
    SyncStateEntry | undefined;
}
