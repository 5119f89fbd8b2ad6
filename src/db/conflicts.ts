/**
 * Write conflicts: PostgreSQL resolves two transactions that wait on each other (a deadlock) or
 * that cannot both be serialized by failing one of them. The failed side is worth running again
 * at once. SQLite has one writer at a time and never reports these.
 *
 * One budget per piece of work: whoever runs it again (the store for a whole transaction, the
 * batchers for one write of a batch) counts its attempts here, and nothing retries inside a
 * retry, so a write is tried at most CONFLICT_ATTEMPTS times however the layers nest.
 */

/** Times a write that lost to a concurrent transaction is tried in all. */
export const CONFLICT_ATTEMPTS = 5;

/** Whether a statement failed only because a concurrent transaction held what it needed. */
export function isWriteConflict(error: unknown): boolean {
  const failure = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = failure?.cause?.code ?? failure?.code;
  return code === '40P01' || code === '40001';
}

/** Whether work that failed with `error` on its `attempt`-th try (from 1) goes again. */
export function isRetriedConflict(error: unknown, attempt: number): boolean {
  return isWriteConflict(error) && attempt < CONFLICT_ATTEMPTS;
}

/**
 * Runs `work` until it does not lose a write conflict, CONFLICT_ATTEMPTS times at most, pausing
 * a few random milliseconds between tries so the two sides do not meet the same way again.
 * `work` must do nothing outside the database that a second run would repeat.
 */
export async function retryWriteConflicts<T>(
  work: () => Promise<T>,
  pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (!isRetriedConflict(error, attempt)) throw error;
      await pause(Math.random() * 20 * attempt);
    }
  }
}
