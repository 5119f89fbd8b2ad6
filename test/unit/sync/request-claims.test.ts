import { describe, expect, it } from 'vitest';
import { createRequestClaims } from '../../../src/sync/request-claims.js';
import { deferred } from '../../helpers/deferred.js';

/** Lets every settled promise's reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createRequestClaims', () => {
  it('runs a set that shares a request with one in flight only after that one settles', async () => {
    const claims = createRequestClaims();
    const first = deferred();
    const order: string[] = [];
    const a = claims.hold(['r1', 'r2'], async () => {
      order.push('a starts');
      await first.promise;
      order.push('a ends');
    });
    const b = claims.hold(['r3', 'r2'], async () => void order.push('b starts'));
    await settle();
    expect(order).toEqual(['a starts']);
    first.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(['a starts', 'a ends', 'b starts']);
  });

  it('runs sets of distinct requests side by side', async () => {
    const claims = createRequestClaims();
    const first = deferred();
    let isSecondDone = false;
    const a = claims.hold(['r1'], () => first.promise);
    await claims.hold(['r2'], async () => void (isSecondDone = true));
    expect(isSecondDone).toBe(true);
    first.resolve();
    await a;
  });

  it('lets the requests go when the work fails, and passes the failure on', async () => {
    const claims = createRequestClaims();
    await expect(claims.hold(['r1'], () => Promise.reject(new Error('disk full')))).rejects.toThrow(
      'disk full',
    );
    await expect(claims.hold(['r1'], async () => 'written')).resolves.toBe('written');
  });

  it('keeps a third set waiting while the second, which waited for the first, holds the request', async () => {
    const claims = createRequestClaims();
    const first = deferred();
    const second = deferred();
    const order: string[] = [];
    const a = claims.hold(['r1'], () => first.promise.then(() => void order.push('a')));
    const b = claims.hold(['r1'], () => second.promise.then(() => void order.push('b')));
    const c = claims.hold(['r1'], async () => void order.push('c'));
    first.resolve();
    await a;
    await settle();
    expect(order).toEqual(['a']);
    second.resolve();
    await Promise.all([b, c]);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('keeps at most `most` sets in flight, of any requests', async () => {
    const claims = createRequestClaims(2);
    const first = deferred();
    const second = deferred();
    const started: string[] = [];
    const a = claims.hold(['r1'], async () => {
      started.push('a');
      await first.promise;
    });
    const b = claims.hold(['r2'], async () => {
      started.push('b');
      await second.promise;
    });
    const c = claims.hold(['r3'], async () => void started.push('c'));
    await settle();
    expect(started).toEqual(['a', 'b']);
    second.resolve();
    await Promise.all([b, c]);
    expect(started).toEqual(['a', 'b', 'c']);
    first.resolve();
    await a;
  });
});
