/**
 * Accounts and facilities repeat across thousands of requests: what each was last written with
 * (keyed "account:<id>", "facility:<id>"), so that an unchanged one is not written again.
 *
 * What a transaction writes is its own until it commits: on PostgreSQL transactions run side by
 * side, and one that took another's uncommitted account for stored would commit a request whose
 * account row is rolled back with the other. So each transaction reads the committed entries
 * through a layer of its own and merges that layer only once its commit succeeded.
 */

/** One transaction's view of the cache. */
export interface WrittenCache {
  /** The value the row was last written with, when known. */
  get(key: string): string | undefined;
  /** Records that this transaction wrote the row with `value`. */
  set(key: string, value: string): void;
  /** Records that the row may differ from what the cache knows: the next write goes through. */
  forget(key: string): void;
}

/** A transaction's layer: write-throughs pending its commit. */
export interface TransactionCache extends WrittenCache {
  /** A savepoint rolled back: what this transaction wrote so far may not be stored after all. */
  distrustPending(): void;
  /** The transaction committed: its entries become everyone's. */
  commit(): void;
}

/** The entries of committed transactions, shared by every transaction of one store. */
export interface SharedWrittenCache {
  /** A layer for a transaction that is starting; dropped unmerged when it rolls back. */
  begin(): TransactionCache;
}

export function createSharedWrittenCache(): SharedWrittenCache {
  const committed = new Map<string, string>();
  return {
    begin() {
      // null: this transaction forgot the entry (or may have written something else).
      const pending = new Map<string, string | null>();
      return {
        get(key) {
          const own = pending.get(key);
          if (own !== undefined) return own ?? undefined;
          return committed.get(key);
        },
        set(key, value) {
          pending.set(key, value);
        },
        forget(key) {
          pending.set(key, null);
        },
        distrustPending() {
          for (const key of pending.keys()) pending.set(key, null);
        },
        commit() {
          for (const [key, value] of pending) {
            if (value === null) committed.delete(key);
            else committed.set(key, value);
          }
          pending.clear();
        },
      };
    },
  };
}
