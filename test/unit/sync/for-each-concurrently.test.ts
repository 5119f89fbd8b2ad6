import { describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../../../src/sync/pool.js';
import { deferred } from '../../helpers/deferred.js';

describe('forEachConcurrently', () => {
  it('starts nothing after a failure, waits for the items started, then throws the first failure', async () => {
    const slow = deferred();
    const started: number[] = [];
    let isSlowDone = false;
    const run = forEachConcurrently([1, 2, 3, 4], 2, async (item) => {
      started.push(item);
      if (item === 1) {
        await slow.promise;
        isSlowDone = true;
      }
      if (item === 2) throw new Error('disk full');
    });
    let isSettled = false;
    void run.catch(() => undefined).then(() => (isSettled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2]);
    expect(isSettled).toBe(false);
    slow.resolve();
    await expect(run).rejects.toThrow('disk full');
    expect(isSlowDone).toBe(true);
    expect(started).toEqual([1, 2]);
  });

  it('keeps at most `limit` items running and runs them all', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await forEachConcurrently([1, 2, 3, 4, 5], 2, async (item) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      done.push(item);
    });
    expect(most).toBe(2);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
