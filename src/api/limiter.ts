import type { Clock } from '../clock.js';

/**
 * Client-side politeness: a request-rate limit (token bucket) and a cap on requests in flight.
 * Every attempt passes through it, retries included, so a retry storm cannot exceed either.
 */

/** Runs attempts under the rate limit and concurrency cap. */
export interface Limiter {
  /** Runs `fn` once a concurrency slot and a rate token are available. */
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Attempts currently running (for tests and metrics). */
  readonly inFlight: number;
}

/** Options of `createLimiter`. */
export interface LimiterOptions {
  clock: Clock;
  /** Requests started per second; 0 means unlimited. */
  rateLimitPerSec: number;
  /** Requests in flight at once; at least 1. */
  concurrency: number;
  /** Requests that may start back to back before spacing applies (default 1: strictly spaced). */
  burst?: number;
  /** Called with the milliseconds an attempt waited for a rate token. */
  onRateLimitedMs?: (ms: number) => void;
}

/** A limiter for one client; share it between everything that talks to the same service. */
export function createLimiter(options: LimiterOptions): Limiter {
  if (!Number.isFinite(options.rateLimitPerSec) || options.rateLimitPerSec < 0) {
    throw new RangeError('rateLimitPerSec must be a finite number >= 0');
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError('concurrency must be an integer >= 1');
  }
  const bucket = createBucket(options.clock, options.rateLimitPerSec, options.burst ?? 1);
  const slots = createSemaphore(options.concurrency);
  return {
    get inFlight() {
      return slots.active;
    },
    async run(fn, signal) {
      // Slot first, then token: a token taken while queued for a slot would be wasted time.
      const release = await slots.acquire(signal);
      try {
        const waitedMs = await bucket.take(signal);
        if (waitedMs > 0) options.onRateLimitedMs?.(waitedMs);
        return await fn();
      } finally {
        release();
      }
    },
  };
}

/**
 * Token bucket by reservation: a taker that finds no token goes into debt and sleeps until its
 * token would have been refilled. Reservations are decided synchronously, so concurrent takers
 * get consecutive slots whatever the clock does while they sleep.
 */
function createBucket(clock: Clock, ratePerSec: number, burst: number) {
  const capacity = Math.max(1, burst);
  let tokens = capacity;
  let lastMs = clock.now();
  return {
    async take(signal?: AbortSignal): Promise<number> {
      if (ratePerSec === 0) return 0;
      const now = clock.now();
      tokens = Math.min(capacity, tokens + ((now - lastMs) * ratePerSec) / 1000);
      lastMs = now;
      tokens -= 1;
      if (tokens >= 0) return 0;
      const waitMs = Math.ceil((-tokens * 1000) / ratePerSec);
      try {
        await clock.sleep(waitMs, signal);
      } catch (error) {
        tokens += 1; // an aborted waiter gives its reservation back
        throw error;
      }
      return waitMs;
    },
  };
}

/** FIFO counting semaphore whose waiters can be aborted. */
function createSemaphore(limit: number) {
  let active = 0;
  const waiters: Array<{ grant: () => void }> = [];
  const release = () => {
    const next = waiters.shift();
    if (next) next.grant();
    else active -= 1;
  };
  return {
    get active() {
      return active;
    },
    acquire(signal?: AbortSignal): Promise<() => void> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (active < limit) {
        active += 1;
        return Promise.resolve(once(release));
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          // The releasing holder hands its slot over directly, so `active` stays unchanged.
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(once(release));
          },
        };
        const onAbort = () => {
          const index = waiters.indexOf(waiter);
          if (index >= 0) waiters.splice(index, 1);
          reject(signal?.reason);
        };
        waiters.push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}
