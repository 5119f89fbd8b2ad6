import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { readRecentRuns } from '../../../src/db/store/run-store.js';
import { readSyncState } from '../../../src/db/store/sync-state-store.js';
import { manualClock } from '../../helpers/simulator.js';

describe('sync_state and sync_runs', () => {
  it('writes, reads and conditionally renews or removes a key', async () => {
    const db = await openDatabase({ location: ':memory:' });
    const store = createStore({ db, clock: manualClock() });
    await store.transaction(async ({ state }) => {
      await state.set('lease', 'mine', '2026-11-25T10:00:00.000Z');
      expect(await state.entry('lease')).toEqual({
        value: 'mine',
        updated_at: '2026-11-25T10:00:00.000Z',
      });
      expect(await state.touchIf('lease', 'theirs', '2026-11-25T10:00:15.000Z')).toBe(false);
      expect(await state.touchIf('lease', 'mine', '2026-11-25T10:00:15.000Z')).toBe(true);
    });
    expect((await readSyncState(db, 'lease'))?.updated_at).toBe('2026-11-25T10:00:15.000Z');
    await store.transaction(async ({ state }) => {
      expect(await state.deleteIf('lease', 'theirs')).toBe(false);
      expect(await state.deleteIf('lease', 'mine')).toBe(true);
      expect(await state.get('lease')).toBeUndefined();
    });
    await db.close();
  });

  it('reads a database that has no tables yet without failing (status on a new install)', async () => {
    const db = await openDatabase({ location: ':memory:', shouldMigrate: false });
    expect(await readSyncState(db, 'last_success_at')).toBeUndefined();
    expect(await readRecentRuns(db, 5)).toEqual([]);
    await db.close();
  });
});
