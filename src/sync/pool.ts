/**
 * Runs `work` over `items` with at most `limit` running at once, in order of start. Stops starting
 * new items once `signal` aborts; items already running finish. Errors are the caller's to catch
 * inside `work`: one failed item must not stop the others.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Iterates `source` one item ahead: the next page is being fetched while the caller stores the
 * current one, so network time and database time overlap instead of adding up. At most two items
 * are held. If the caller stops early, the pending fetch is left to settle quietly.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<T>> | undefined = iterator.next();
  try {
    while (pending) {
      const result: IteratorResult<T> = await pending;
      pending = undefined;
      if (result.done) return;
      pending = iterator.next();
      yield result.value;
    }
  } finally {
    if (pending) {
      pending.catch(() => undefined);
      void iterator.return?.()?.catch?.(() => undefined);
    }
  }
}
