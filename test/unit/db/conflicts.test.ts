import { describe, expect, it } from 'vitest';
import {
  CONFLICT_ATTEMPTS,
  isWriteConflict,
  retryWriteConflicts,
} from '../../../src/db/conflicts.js';
import type { Store, StoreTx } from '../../../src/db/store.js';
import { createWriteBatcher } from '../../../src/db/write-batcher.js';

/** What PostgreSQL reports for a deadlock, as the pg driver hands it on. */
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
const noPause = async () => undefined;

describe('write conflicts', () => {
  it('knows a deadlock and a serialization failure, on the error or on its cause', () => {
    expect(isWriteConflict(deadlock())).toBe(true);
    expect(isWriteConflict({ code: '40001' })).toBe(true);
    expect(isWriteConflict(new Error('wrapped', { cause: { code: '40P01' } }))).toBe(true);
    expect(isWriteConflict({ code: '23505' })).toBe(false);
    expect(isWriteConflict(null)).toBe(false);
  });

  it('runs work again until it stops losing, at most five times in all', async () => {
    let calls = 0;
    const value = await retryWriteConflicts(async () => {
      calls += 1;
      if (calls < 3) throw deadlock();
      return 'done';
    }, noPause);
    expect([value, calls]).toEqual(['done', 3]);

    calls = 0;
    const always = retryWriteConflicts(async () => {
      calls += 1;
      throw deadlock();
    }, noPause);
    await expect(always).rejects.toThrow('deadlock detected');
    expect(calls).toBe(CONFLICT_ATTEMPTS);
    expect(CONFLICT_ATTEMPTS).toBe(5);
  });

  it('never runs again what failed for another reason', async () => {
    let calls = 0;
    const failing = retryWriteConflicts(async () => {
      calls += 1;
      throw new Error('disk full');
    }, noPause);
    await expect(failing).rejects.toThrow('disk full');
    expect(calls).toBe(1);
  });
});

/** A store whose transactions run work on a bare tx, and may fail at commit. */
function fakeStore(commit: () => void = () => undefined) {
  const options: unknown[] = [];
  const tx = { savepoint: (work: () => Promise<unknown>) => work() } as unknown as StoreTx;
  const store = {
    async transaction(work: (tx: StoreTx) => Promise<unknown>, option?: unknown) {
      options.push(option);
      const result = await work(tx);
      commit();
      return result;
    },
  } as unknown as Store;
  return { store, options };
}

describe('the write batcher on conflicts', () => {
  it('runs a write that lost again in a later batch, on one budget of five tries', async () => {
    const { store, options } = fakeStore();
    const batcher = createWriteBatcher(store);
    let tries = 0;
    const losing = batcher.run(async () => {
      tries += 1;
      throw deadlock();
    });
    let otherTries = 0;
    const winning = batcher.run(async () => {
      otherTries += 1;
      if (otherTries < 2) throw deadlock();
      return 'stored';
    });
    await expect(losing).rejects.toThrow('deadlock detected');
    await expect(winning).resolves.toBe('stored');
    expect([tries, otherTries]).toEqual([5, 2]);
    // The store does not retry the batch's transaction as well: no tries within tries.
    expect(
      options.every((o) => (o as { isConflictRetried?: boolean }).isConflictRetried === false),
    ).toBe(true);
  });

  it('runs every write of a batch whose commit lost again, five times in all, not five times five', async () => {
    const { store } = fakeStore(() => {
      throw deadlock();
    });
    const batcher = createWriteBatcher(store);
    let tries = 0;
    const write = batcher.run(async () => {
      tries += 1;
      return 'never committed';
    });
    await expect(write).rejects.toThrow('deadlock detected');
    expect(tries).toBe(5);
  });
});
