import { describe, expect, it } from 'vitest';
import { createTail } from '../../../src/sync/pool.js';
import { deferred } from '../../helpers/deferred.js';

describe('createTail', () => {
  it('lets the caller go on while fewer than the limit are unfinished, then waits for one', async () => {
    const tail = createTail(2);
    const first = deferred();
    const second = deferred();
    await tail.add(first.promise);
    let isSecondAdded = false;
    const secondAdded = tail.add(second.promise).then(() => (isSecondAdded = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(isSecondAdded).toBe(false);
    first.resolve();
    await secondAdded;
    expect(isSecondAdded).toBe(true);
  });

  it('drains: resolves only once every piece of work has finished', async () => {
    const tail = createTail(10);
    const pieces = [deferred(), deferred(), deferred()];
    for (const piece of pieces) await tail.add(piece.promise);
    let isDrained = false;
    const drained = tail.drain().then(() => (isDrained = true));
    pieces[0]!.resolve();
    pieces[2]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(isDrained).toBe(false);
    pieces[1]!.resolve();
    await drained;
    expect(isDrained).toBe(true);
  });
});
