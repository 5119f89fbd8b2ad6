import type { Store, StoreTx } from './store.js';
import { isWriteConflict } from './sql.js';

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

/** Times a write that lost a deadlock to a concurrent transaction is tried again. */
const CONFLICT_ATTEMPTS = 5;

/**
 * Group commit: writes that arrive while a batch is being committed wait for the next one, so
 * eight detail fetches finishing together cost one commit, not eight. Each write keeps its own
 * atomicity (a savepoint), and learns its outcome only after the commit that holds it: a write
 * reported done is durable. A failed commit fails every write of its batch.
 */
export function createWriteBatcher(store: Store, { maxBatch = 100 } = {}): WriteBatcher {
  let queue: Pending[] = [];
  let isFlushing = false;

  const flush = async () => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let settled: (() => void)[] = [];
      try {
        await store.transaction(async (tx) => {
          // A transaction run again (it lost a deadlock) starts the batch over.
          settled = [];
          for (const item of batch) {
            try {
              const value = await tx.savepoint(() => item.work(tx));
              settled.push(() => item.resolve(value));
            } catch (error) {
              // Two writers locking the same requests in another order (PostgreSQL): the
              // server failed this one's statement; it goes again in the next batch.
              if (isWriteConflict(error) && item.attempts < CONFLICT_ATTEMPTS) {
                item.attempts += 1;
                settled.push(() => queue.push(item));
              } else settled.push(() => item.reject(error));
            }
          }
        });
        for (const settle of settled) settle();
      } catch (error) {
        for (const item of batch) item.reject(error);
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
