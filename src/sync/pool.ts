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
