/**
 * Sets written side by side hold distinct requests. On PostgreSQL a set reads the stored rows of
 * its requests and decides what to write before an earlier set still in flight has committed
 * (pool.ts, SETS_IN_FLIGHT): two sets holding the same new request would both find it absent and
 * both log it as created. Within one pass the pages' records are distinct; across the windows a
 * backfill imports at once they need not be (a request moves from one window to the next, or
 * sits on the boundary of two). A set claims its requests before its transaction and waits while
 * a set in flight holds any of them.
 */
export interface RequestClaims {
  /** Runs `work` once no other holder has any of `ids`, holding them until it settles. */
  hold<T>(ids: readonly string[], work: () => Promise<T>): Promise<T>;
}

/** No claims: for writers that never run two sets of the same requests at once (the poll). */
export const UNCLAIMED: RequestClaims = { hold: (_ids, work) => work() };

export function createRequestClaims(): RequestClaims {
  const held = new Map<string, Promise<void>>();
  return {
    async hold(ids, work) {
      // A holder only waits before it claims, never while it holds: no two wait on each other.
      for (;;) {
        const busy = new Set<Promise<void>>();
        for (const id of ids) {
          const holder = held.get(id);
          if (holder) busy.add(holder);
        }
        if (busy.size === 0) break;
        await Promise.all(busy);
      }
      let settle!: () => void;
      const done = new Promise<void>((resolve) => (settle = resolve));
      for (const id of ids) held.set(id, done);
      try {
        return await work();
      } finally {
        for (const id of ids) if (held.get(id) === done) held.delete(id);
        settle();
      }
    },
  };
}
