import type { Connection, Sql } from '../sql.js';

/** One sync_state entry. */
export interface SyncStateEntry {
  value: string;
  updated_at: string;
}

const SELECT = 'SELECT value, updated_at FROM sync_state WHERE key = @key';

/**
 * sync_state: the daemon's small key/value state (last success, heartbeat, owner lease, polling
 * retired). Every statement on the table is here; the keys belong to their users.
 */
export function createSyncStateStore(sql: Sql) {
  const entry = (key: string) => sql.get<SyncStateEntry>(SELECT, { key });
  return {
    async get(key: string): Promise<string | undefined> {
      return (await entry(key))?.value;
    },
    /** The value with the time it was last written. */
    entry,
    async set(key: string, value: string, at: string): Promise<void> {
      await sql.run(
        `INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @updated_at)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        { key, value, updated_at: at },
      );
    },
    async delete(key: string): Promise<void> {
      await sql.run('DELETE FROM sync_state WHERE key = @key', { key });
    },
    /** Deletes `key` only while it still holds `value`; returns whether it did. */
    async deleteIf(key: string, value: string): Promise<boolean> {
      return (
        (await sql.run('DELETE FROM sync_state WHERE key = @key AND value = @value', {
          key,
          value,
        })) > 0
      );
    },
    /** Moves `key`'s updated_at to `at` only while it still holds `value`; returns whether it did. */
    async touchIf(key: string, value: string, at: string): Promise<boolean> {
      return (
        (await sql.run(
          'UPDATE sync_state SET updated_at = @at WHERE key = @key AND value = @value',
          { key, value, at },
        )) > 0
      );
    },
  };
}

/** The sync_state store's interface. */
export type SyncStateStore = ReturnType<typeof createSyncStateStore>;

/** Reads one key without writing, for status and doctor: undefined when the table is missing. */
export async function readSyncState(
  db: Connection,
  key: string,
): Promise<SyncStateEntry | undefined> {
  if (!(await db.hasTable('sync_state'))) return undefined;
  return db.read((sql) => sql.get<SyncStateEntry>(SELECT, { key }));
}

/** Every entry whose key starts with `prefix`, read-only (status); none when the table is missing. */
export async function readSyncStatePrefix(
  db: Connection,
  prefix: string,
): Promise<(SyncStateEntry & { key: string })[]> {
  if (!(await db.hasTable('sync_state'))) return [];
  const rows = await db.read((sql) =>
    sql.all<SyncStateEntry & { key: string }>(
      'SELECT key, value, updated_at FROM sync_state WHERE substr(key, 1, @length) = @prefix',
      { prefix, length: prefix.length },
    ),
  );
  return rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
