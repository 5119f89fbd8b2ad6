import type { Clock } from '../clock.js';

/**
 * Client-side politeness: a cap on requests in flight, an optional hard rate cap, and adaptive
 * rate control (AIMD). Every attempt passes through it, retries included, so a retry storm can
 * exceed none of them.
 *
 * The service publishes no rate limit, so nothing is paced until it says so: the concurrency cap
 * alone bounds the load. When it answers 429 (or 503 with Retry-After), every attempt waits out
 * its Retry-After and the rate is halved from what was being sent; each second without another
 * such answer adds a twentieth of that rate back (at least one request a second), so it climbs
 * back in about 10 s and then probes beyond, until it is unpaced again. So a client converges on the service's limit, probing it gently, instead of
 * either idling under an arbitrary cap or storming it.
 */

/** Runs attempts under the rate limits and the concurrency cap. */
export interface Limiter {
  /** Runs `fn` once a concurrency slot and a rate token are available. */
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** The service asked us to slow down (429, or 503 with Retry-After). */
  onThrottled(retryAfterMs: number | null): void;
  /** The service answered without asking us to slow down. */
  onAnswered(): void;
  /** Attempts currently running (for tests and metrics). */
  readonly inFlight: number;
  /** The adaptive rate now, in requests per second (Infinity while unpaced). */
  readonly adaptiveRatePerSec: number;
}

/** Below this, the adaptive rate is not halved further. */
const MIN_ADAPTIVE_RATE = 0.5;
/** Above this, the adaptive rate lets go: unpaced again. */
const MAX_ADAPTIVE_RATE = 1000;
/** After a halving, 429s answering calls already sent do not halve again for this long. */
const THROTTLE_COOLDOWN_MS = 1000;
/** How often the adaptive rate grows back. */
const GROWTH_INTERVAL_MS = 1000;
/** The window over which the rate being sent is measured. */
const SENT_WINDOW_MS = 1000;

/** Options of `createLimiter`. */
export interface LimiterOptions {
  clock: Clock;
  /** A hard cap on requests started per second; 0 means none. */
  rateLimitPerSec: number;
  /** Adapt the rate to the service's 429s (default true). */
  isAdaptive?: boolean;
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
  const { clock } = options;
  const hardCap = createBucket(clock, options.rateLimitPerSec, options.burst ?? 1);
  const adaptive = createAdaptiveRate(clock, options.isAdaptive ?? true);
  const slots = createSemaphore(options.concurrency);
  return {
    get inFlight() {
      return slots.active;
    },
    get adaptiveRatePerSec() {
      return adaptive.ratePerSec;
    },
    onThrottled: (retryAfterMs) => adaptive.throttled(retryAfterMs),
    onAnswered: () => adaptive.answered(),
    async run(fn, signal) {
      // Slot first, then tokens: a token taken while queued for a slot would be wasted time.
      const release = await slots.acquire(signal);
      try {
        const waitedMs = (await adaptive.take(signal)) + (await hardCap.take(signal));
        if (waitedMs > 0) options.onRateLimitedMs?.(waitedMs);
        return await fn();
      } finally {
        release();
      }
    },
  };
}

/**
 * AIMD: unpaced until the service throttles; then halved from the rate being sent, and grown
 * back a constant step each quiet second. While a Retry-After runs, every taker waits it out.
 */
function createAdaptiveRate(clock: Clock, isOn: boolean) {
  let ratePerSec = Number.POSITIVE_INFINITY;
  let bucket = createBucket(clock, 0, 1);
  let pausedUntil = 0;
  let lastThrottleMs = Number.NEGATIVE_INFINITY;
  let lastGrowthMs = 0;
  let step = 1;
  const sent: number[] = [];
  const setRate = (next: number) => {
    ratePerSec = next > MAX_ADAPTIVE_RATE ? Number.POSITIVE_INFINITY : next;
    bucket = createBucket(clock, Number.isFinite(ratePerSec) ? ratePerSec : 0, 1);
  };
  return {
    get ratePerSec() {
      return ratePerSec;
    },
    async take(signal?: AbortSignal): Promise<number> {
      if (!isOn) return 0;
      let waitedMs = 0;
      const pauseMs = pausedUntil - clock.now();
      if (pauseMs > 0) {
        await clock.sleep(pauseMs, signal);
        waitedMs += pauseMs;
      }
      waitedMs += await bucket.take(signal);
      const now = clock.now();
      sent.push(now);
      while (sent.length > 0 && sent[0]! < now - SENT_WINDOW_MS) sent.shift();
      return waitedMs;
    },
    throttled(retryAfterMs: number | null): void {
      if (!isOn) return;
      const now = clock.now();
      pausedUntil = Math.max(pausedUntil, now + (retryAfterMs ?? 0));
      // Several answers to calls sent before the first 429 say the same thing once.
      if (now - lastThrottleMs < THROTTLE_COOLDOWN_MS) return;
      lastThrottleMs = now;
      lastGrowthMs = now;
      const current = Math.min(ratePerSec, Math.max(sent.length, 1));
      // Back to where it was throttled in about 10 s, then beyond it, a step a second.
      step = Math.max(1, current / 20);
      setRate(Math.max(MIN_ADAPTIVE_RATE, current / 2));
    },
    answered(): void {
      if (!isOn || !Number.isFinite(ratePerSec)) return;
      const now = clock.now();
      if (now - lastGrowthMs < GROWTH_INTERVAL_MS) return;
      const steps = Math.floor((now - lastGrowthMs) / GROWTH_INTERVAL_MS);
      lastGrowthMs += steps * GROWTH_INTERVAL_MS;
      setRate(ratePerSec + steps * step);
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
