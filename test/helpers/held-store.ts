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

/**
 * `store` whose second transaction, once `isDue()`, fails with "disk full". With `isBeside`
 * (PostgreSQL, where two are written at once) the first is held until the second has failed;
 * otherwise the second follows the first. Later transactions, and those before `isDue()` (the
 * run's bookkeeping), go through untouched. `release` is a test's valve for the held one.
 */
export function failSecondTransaction(store: Store, isDue: () => boolean, isBeside: boolean) {
  let started = 0;
  let isFirstSettled = false;
  const failed = deferred();
  const failing: Store = {
    ...store,
    async transaction(work, options) {
      if (!isDue() || started >= 2) return store.transaction(work, options);
      started += 1;
      if (started === 1) {
        if (isBeside) await failed.promise;
        const written = await store.transaction(work, options);
        isFirstSettled = true;
        return written;
      }
      failed.resolve();
      throw new Error('disk full');
    },
  };
  return {
    store: failing,
    release: () => failed.resolve(),
    started: () => started,
    isFirstSettled: () => isFirstSettled,
  };
}
