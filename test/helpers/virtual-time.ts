import type { Clock } from '../../src/clock.js';
import { T0 } from './simulator.js';

/**
 * Simulated time that moves by itself, for tests whose subject is waiting (a rate limit, its
 * Retry-After, the limiter's pacing). A sleep ends at its due moment on this clock, and the
 * clock jumps to the earliest due moment once no HTTP call of this process is in flight, so the
 * waits cost no real time while every party (the simulator, the client, the store) still sees
 * them. Time stands still while a call is in flight: the service answers as if the network took
 * no time, and a call's cost is only what the service's own rules make it wait.
 *
 * Time may move while other I/O is pending (a PostgreSQL write): that run has a slower database.
 * Any order of wake-ups it produces is one a real run could have produced (no sleeper wakes
 * early, time never goes back); it only leaves out the machine's speed.
 */
export interface VirtualTime {
  clock: Clock;
  /** Restores the global fetch; sleepers still waiting never wake (their test is over). */
  stop(): void;
}

interface Sleeper {
  atMs: number;
  wake(): void;
}

/** Starts simulated time at `startMs`; watches the global fetch until `stop`. */
export function startVirtualTime(startMs = T0): VirtualTime {
  let now = startMs;
  let inFlight = 0;
  let isStepQueued = false;
  let sleepers: Sleeper[] = [];

  // A step runs on a later turn of the event loop, after the woken code's continuations: a call
  // they start counts as in flight (from fetch until its response headers) before it looks.
  const queueStep = () => {
    if (isStepQueued) return;
    isStepQueued = true;
    setImmediate(step);
  };
  const step = () => {
    isStepQueued = false;
    if (inFlight > 0 || sleepers.length === 0) return;
    now = Math.max(now, Math.min(...sleepers.map((sleeper) => sleeper.atMs)));
    const due = sleepers.filter((sleeper) => sleeper.atMs <= now);
    sleepers = sleepers.filter((sleeper) => sleeper.atMs > now);
    for (const sleeper of due) sleeper.wake();
    queueStep();
  };

  const realFetch = globalThis.fetch;
  globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
    inFlight += 1;
    try {
      return await realFetch(...args);
    } finally {
      inFlight -= 1;
      queueStep();
    }
  };

  const clock: Clock = {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        if (ms <= 0) {
          resolve();
          return;
        }
        const onAbort = () => {
          sleepers = sleepers.filter((other) => other !== sleeper);
          reject(signal?.reason);
        };
        const sleeper: Sleeper = {
          atMs: now + ms,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.push(sleeper);
        queueStep();
      }),
  };

  return {
    clock,
    stop() {
      globalThis.fetch = realFetch;
      sleepers = [];
    },
  };
}
