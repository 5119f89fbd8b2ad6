import type { Store } from '../../src/db/store.js';
import { deferred } from './deferred.js';

/**
 * `store` with its first transaction, once `isDue()`, held until another transaction starts:
 * written one at a time, nothing else would start and the caller would wait for good, so
 * `release` is there for a test's valve. `startedWhileHeld` counts the transactions that started
 * beside the held one.
 */
export function holdFirstTransaction(store: Store, isDue: () => boolean) {
  let hasHeld = false;
  let isHolding = false;
  let startedWhileHeld = 0;
  const gate = deferred();
  const release = () => {
    isHolding = false;
    gate.resolve();
  };
  const held: Store = {
    ...store,
    async transaction(work, options) {
      if (isDue() && !hasHeld) {
        hasHeld = true;
        isHolding = true;
        await gate.promise;
      } else if (isHolding) {
        startedWhileHeld += 1;
        release();
      }
      return store.transaction(work, options);
    },
  };
  return { store: held, release, startedWhileHeld: () => startedWhileHeld };
}
