import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../../src/api/limiter.js';
import { createFakeClock, START_MS } from '../../helpers/api.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('limiter', () => {
  it('spaces attempts at the configured rate (reservations, so concurrent takers queue)', async () => {
    const clock = createFakeClock();
    const waited: number[] = [];
    const limiter = createLimiter({
      clock,
      rateLimitPerSec: 10,
      concurrency: 100,
      onRateLimitedMs: (ms) => waited.push(ms),
    });
    await Promise.all(Array.from({ length: 5 }, () => limiter.run(async () => undefined)));
    // First at once, then each waits for its own token: 5 starts span 400 ms at 10/s. (The fake
    // clock advances on every sleep, so each taker finds the previous one's time already passed.)
    expect(clock.sleeps).toEqual([100, 100, 100, 100]);
    expect(waited).toEqual([100, 100, 100, 100]);
    expect(clock.now() - START_MS).toBe(400);
  });

  it('reserves consecutive slots for takers that arrive at the same instant', async () => {
    const clock = createFakeClock();
    const frozen = { now: () => START_MS, sleep: clock.sleep }; // time does not pass at all
    const limiter = createLimiter({ clock: frozen, rateLimitPerSec: 10, concurrency: 100 });
    await Promise.all(Array.from({ length: 5 }, () => limiter.run(async () => undefined)));
    expect(clock.sleeps).toEqual([100, 200, 300, 400]);
  });

  it('refills over time and does not sleep when under the rate', async () => {
    const clock = createFakeClock();
    const limiter = createLimiter({ clock, rateLimitPerSec: 2, concurrency: 1 });
    for (let i = 0; i < 3; i += 1) {
      await limiter.run(async () => undefined);
      clock.advance(500);
    }
    expect(clock.sleeps).toEqual([]);
  });

  it('0 means unlimited', async () => {
    const clock = createFakeClock();
    const limiter = createLimiter({ clock, rateLimitPerSec: 0, concurrency: 10 });
    await Promise.all(Array.from({ length: 20 }, () => limiter.run(async () => undefined)));
    expect(clock.sleeps).toEqual([]);
  });

  it('caps the number in flight and runs waiters in order', async () => {
    const clock = createFakeClock();
    const limiter = createLimiter({ clock, rateLimitPerSec: 0, concurrency: 2 });
    let inFlight = 0;
    let maxInFlight = 0;
    const order: number[] = [];
    const task = (n: number) =>
      limiter.run(async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        order.push(n);
        await tick();
        inFlight -= 1;
      });
    await Promise.all([1, 2, 3, 4, 5, 6].map(task));
    expect(maxInFlight).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
    expect(limiter.inFlight).toBe(0);
  });

  it('releases the slot when the task throws, and drops an aborted waiter', async () => {
    const clock = createFakeClock();
    const limiter = createLimiter({ clock, rateLimitPerSec: 0, concurrency: 1 });
    let release!: () => void;
    const first = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const aborted = limiter.run(async () => 'never', controller.signal);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    release();
    await first;
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    await expect(limiter.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('rejects nonsense settings', () => {
    const clock = createFakeClock();
    expect(() => createLimiter({ clock, rateLimitPerSec: -1, concurrency: 1 })).toThrow(RangeError);
    expect(() => createLimiter({ clock, rateLimitPerSec: 1, concurrency: 0 })).toThrow(RangeError);
  });

  it('paces nothing until the service throttles; then waits out Retry-After, halves the rate it was sending, and grows it back a step a second', async () => {
    const clock = createFakeClock();
    const limiter = createLimiter({ clock, rateLimitPerSec: 0, concurrency: 100 });
    await Promise.all(Array.from({ length: 40 }, () => limiter.run(async () => undefined)));
    expect(clock.sleeps).toEqual([]);
    expect(limiter.adaptiveRatePerSec).toBe(Number.POSITIVE_INFINITY);

    // 40 sent within the last second; the service says 429, retry after 2 s.
    limiter.onThrottled(2000);
    expect(limiter.adaptiveRatePerSec).toBe(20);
    // The answers to the other calls of that burst say the same thing: no second halving.
    limiter.onThrottled(2000);
    expect(limiter.adaptiveRatePerSec).toBe(20);
    await limiter.run(async () => undefined);
    expect(clock.sleeps).toEqual([2000]);
    await Promise.all(Array.from({ length: 3 }, () => limiter.run(async () => undefined)));
    expect(clock.sleeps).toEqual([2000, 50, 50, 50]);

    // Each quiet second adds a twentieth of the throttled rate (2/s here): 2.15 s of waiting
    // above and 3 s more make five.
    clock.advance(3000);
    limiter.onAnswered();
    expect(limiter.adaptiveRatePerSec).toBe(20 + 5 * 2);
    // Past the ceiling it lets go: unpaced again.
    clock.advance(600_000);
    limiter.onAnswered();
    expect(limiter.adaptiveRatePerSec).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps a hard cap under the adaptive rate, and adapts not at all when told not to', async () => {
    const clock = createFakeClock();
    const fixed = createLimiter({ clock, rateLimitPerSec: 5, concurrency: 10, isAdaptive: false });
    fixed.onThrottled(5000);
    expect(fixed.adaptiveRatePerSec).toBe(Number.POSITIVE_INFINITY);
    await Promise.all(Array.from({ length: 3 }, () => fixed.run(async () => undefined)));
    expect(clock.sleeps).toEqual([200, 200]);
  });
});
