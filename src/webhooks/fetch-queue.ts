import type { Store } from '../db/store.js';
import { refreshRequest } from '../sync/refresh.js';
import type { SyncClient } from '../sync/ports.js';

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** Detail fetches queued by webhook cues, deduped per request. */
export interface FetchQueue {
  /** Resolves once each request's detail has been fetched and stored after this call. */
  fetch(requestIds: readonly string[]): Promise<void>;
  /** Resolves when nothing is queued or running. */
  idle(): Promise<void>;
  /** Fetches queued or running. */
  readonly size: number;
}

/**
 * Detail fetches through `refreshRequest`, the poll cycle's own path (same guards, same change
 * log, 403 marks the request unavailable). A request already queued is fetched once for all its
 * cues; one already running is fetched again afterwards, because the running fetch may have read
 * the request before the change the new cue announces.
 */
export function createFetchQueue({
  client,
  store,
  concurrency,
  signal,
}: {
  client: SyncClient;
  store: Store;
  concurrency: number;
  signal: AbortSignal;
}): FetchQueue {
  const queued = new Map<string, Waiter[]>();
  const running = new Set<string>();
  let idleWaiters: (() => void)[] = [];

  const pump = () => {
    for (const [id, waiters] of queued) {
      if (running.size >= concurrency) return;
      if (running.has(id)) continue;
      queued.delete(id);
      running.add(id);
      void run(id, waiters);
    }
    if (queued.size === 0 && running.size === 0) {
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    }
  };

  const run = async (id: string, waiters: Waiter[]) => {
    try {
      await refreshRequest({ client, store }, id, { source: 'webhook', signal });
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    } finally {
      running.delete(id);
      pump();
    }
  };

  const one = (id: string) =>
    new Promise<void>((resolve, reject) => {
      const waiters = queued.get(id) ?? [];
      waiters.push({ resolve, reject });
      queued.set(id, waiters);
    });

  return {
    fetch(requestIds) {
      const done = Promise.all([...new Set(requestIds)].map(one)).then(() => undefined);
      pump();
      return done;
    },
    idle() {
      if (queued.size === 0 && running.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    get size() {
      return queued.size + running.size;
    },
  };
}
