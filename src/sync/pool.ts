/**
 * Runs `work` over `items` with at most `limit` running at once, in order of start. Stops starting
 * new items once `signal` aborts or an item has failed; items already running finish, and then
 * the first failure is thrown, so that no work outlives the call. Work that must not stop the
 * others catches its own errors.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !signal?.aborted && !failure) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Iterates `source` one item ahead: the next page is being fetched while the caller stores the
 * current one, so network time and database time overlap instead of adding up. At most two items
 * are held. If the caller stops early, the pending fetch is left to settle quietly.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  // Each prefetch gets a no-op handler at once: it may fail while nobody awaits it yet (during the
  // turns below, or after the caller stopped); awaiting it later still sees the failure.
  const ask = () => {
    const next = iterator.next();
    next.catch(() => undefined);
    return next;
  };
  let pending: Promise<IteratorResult<T>> | undefined = ask();
  try {
    while (pending !== undefined) {
      const result: IteratorResult<T> = await pending;
      pending = undefined;
      if (result.done) return;
      pending = ask();
      // fetch dispatches on a later turn of the event loop: let the request leave before the
      // caller's synchronous SQLite work holds the loop (two turns, checked against the service's
      // call timestamps).
      await turn();
      await turn();
      yield result.value;
    }
  } finally {
    if (pending) void iterator.return?.()?.catch?.(() => undefined);
  }
}

/**
 * Sets written at once, per engine: a backfill pass's sets, a poll cycle's awaiting pages. On
 * PostgreSQL a set's transaction is round trips during which the process waits, and the planning
 * of the next set is CPU time during which the server waits: with two in flight (on two
 * connections of the pool) they overlap, and a 4,600-request import took 1,109 to 1,305 ms
 * against 1,507 to 1,803 with one (measured side by side). The sets hold distinct requests, and
 * the shared rows they upsert (accounts, facilities) are written in key order, so the two do not
 * deadlock. SQLite writes one transaction at a time on its one connection, and with two in
 * flight measured no faster.
 */
export const SETS_IN_FLIGHT = { sqlite: 1, postgres: 2 } as const;

/**
 * Work that finishes behind its caller: the detail fetches of a cycle hand their records to the
 * record batcher and fetch the next while the set that holds them is written. Without it, each
 * fetch slot waited for its record's commit, and on PostgreSQL, where a set's transaction is a
 * few round trips, that wait rather than the service set the pace. `add` returns at once while
 * fewer than `limit` are unfinished, so what waits to be written stays bounded; `drain` waits
 * for all of them. The work must not reject: its caller catches what it counts.
 */
export function createTail(limit: number) {
  const unfinished = new Set<Promise<void>>();
  return {
    async add(work: Promise<void>): Promise<void> {
      const tracked = work.finally(() => unfinished.delete(tracked));
      unfinished.add(tracked);
      while (unfinished.size >= limit) await Promise.race(unfinished);
    },
    async drain(): Promise<void> {
      await Promise.all(unfinished);
    },
  };
}
