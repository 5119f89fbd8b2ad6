import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * A transaction opened inside another is a programming error: on SQLite it waits behind the one
 * around it forever, on PostgreSQL it commits apart from it. The check that catches it follows
 * the async context with AsyncLocalStorage, which on Node 20 and 22 hooks every promise the
 * process makes. Without it, SQLite's store and poll paths reach 0.02 to 0.04 more of the
 * bench's floor (0.39 to 0.42 of it for changed requests, 0.28 to 0.32 for the poll path). So
 * the product runs without it, and the test workers, which drive every store path, switch it on
 * (test/setup/nesting-check.ts).
 */
let isChecking = false;

/** Switches the check on (or off) for every connection of this process. */
export function checkNestedTransactions(on: boolean): void {
  isChecking = on;
}

/** One connection's view of which async contexts are inside one of its transactions. */
export interface NestingCheck {
  /** Throws when called inside a transaction of this connection (while the check is on). */
  refuseIfInside(): void;
  /** Runs `work` as a transaction's body. */
  inside<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * One storage for the whole process, holding the connections whose transaction the current async
 * context is inside. A storage per connection would stay in Node's list of enabled storages after
 * its connection closed, and every promise the process makes walks that list: in a test worker
 * that opens hundreds of databases, that walk was a tenth of the worker's CPU.
 */
const enclosingTransactions = new AsyncLocalStorage<ReadonlySet<NestingCheck>>();

export function nestingCheck(): NestingCheck {
  const check: NestingCheck = {
    refuseIfInside() {
      if (isChecking && enclosingTransactions.getStore()?.has(check)) {
        throw new Error('a transaction was opened inside another; pass the open one down instead');
      }
    },
    inside(work) {
      if (!isChecking) return work();
      const outer = enclosingTransactions.getStore();
      return enclosingTransactions.run(new Set(outer).add(check), work);
    },
  };
  return check;
}
