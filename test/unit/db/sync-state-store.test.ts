import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/open.js';
import { readRecentRuns } from '../../../src/db/run-store.js';
import { createSyncStateStore, readSyncState } from '../../../src/db/sync-state-store.js';

describe('sync_state and sync_runs', () => {
  it('writes, reads and conditionally renews or removes a key', () => {
    const db = openDatabase({ path: ':memory:' });
    const state = createSyncStateStore(db.sqlite);
    state.set('lease', 'mine', '2026-11-25T10:00:00.000Z');
    expect(state.entry('lease')).toEqual({ value: 'mine', updated_at: '2026-11-25T10:00:00.000Z' });
    expect(state.touchIf('lease', 'theirs', '2026-11-25T10:00:15.000Z')).toBe(false);
    expect(state.touchIf('lease', 'mine', '2026-11-25T10:00:15.000Z')).toBe(true);
    expect(readSyncState(db.sqlite, 'lease')?.updated_at).toBe('2026-11-25T10:00:15.000Z');
    expect(state.deleteIf('lease', 'theirs')).toBe(false);
    expect(state.deleteIf('lease', 'mine')).toBe(true);
    expect(state.get('lease')).toBeUndefined();
  });

  it('reads a database that has no tables yet without failing (status on a new install)', () => {
    const sqlite = new Database(':memory:');
    expect(readSyncState(sqlite, 'last_success_at')).toBeUndefined();
    expect(readRecentRuns(sqlite, 5)).toEqual([]);
  });
});
