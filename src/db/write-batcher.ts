import { isRetriedConflict } from './conflicts.js';
import type { Store, StoreTx } from './store.js';

/** Gathers writes from concurrent callers into one transaction. */
export interface WriteBatcher {
  /**
   * Runs `work` in the next batch's transaction, inside a savepoint of its own: when it throws,
   * only its writes are rolled back. Resolves (or rejects) once the batch has committed.
   */
  run<T>(work: (tx: StoreTx) => Promise<T>): Promise<T>;
}

interface Pending {
  work: (tx: StoreTx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  attempts: number;
}

/**
 * Group commit: writes that arrive while a batch is being committed wait for the next one, so
 * eight detail fetches finishing together cost one commit, not eight. Each write keeps its own
 * atomicity (a savepoint), and learns its outcome only after the commit that holds it: a write
 * reported done is durable. A batch that lost to a concurrent writer goes again; any other
 * failed commit fails every write of its batch.
 */
export function createWriteBatcher(store: Store, { maxBatch = 100 } = {}): WriteBatcher {
  let queue: Pending[] = [];
  let isFlushing = false;

  /** Settles a write that failed: lost to a concurrent writer, it goes in the next batch. */
  const failed = (item: Pending, error: unknown) => () => {
    if (isRetriedConflict(error, item.attempts)) {
      item.attempts += 1;
      queue.push(item);
    } else item.reject(error);
  };

  const flush = async () => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      const settled: (() => void)[] = [];
      try {
        // Conflicts are retried here, write by write, each on one budget (conflicts.ts).
        await store.transaction(
          async (tx) => {
            for (const item of batch) {
              try {
                const value = await tx.savepoint(() => item.work(tx));
                settled.push(() => item.resolve(value));
              } catch (error) {
                // Two writers locking the same requests in another order (PostgreSQL): the
                // server failed this one's statement; it goes again in the next batch.
                settled.push(failed(item, error));
              }
            }
          },
          { isConflictRetried: false },
        );
        for (const settle of settled) settle();
      } catch (error) {
        // Nothing of the batch is stored: each write goes again (a conflict) or fails.
        for (const item of batch) failed(item, error)();
      }
    }
    isFlushing = false;
  };

  return {
    run<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject, attempts: 1 });
        if (isFlushing) return;
        isFlushing = true;
        // Writes of one turn of the event loop leave together.
        setImmediate(() => void flush());
      });
    },
  };
}
