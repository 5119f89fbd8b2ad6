import type { ChangeRow } from '../../mirror/request-plan.js';
import { withSavepoint, type Sql } from '../sql.js';
import { REQUEST_SET_SQL as SET } from './request-batch-sql.js';
import { ROW_INSERTS } from './request-sql.js';

/**
 * The transaction-level advisory lock under which a PostgreSQL transaction numbers its change
 * rows, just before it commits (beside the migration lock, 7_461_019_001, and the leader's).
 */
export const CHANGE_POSITION_LOCK = 7_461_019_003;

/**
 * The change rows of one transaction. request_changes.change_id is the change feed's position,
 * and a reader asks for the rows after the last position it saw: a row must never become
 * visible below a position already read.
 *
 * SQLite has one writer at a time, so positions follow commit order as rows are inserted. On
 * PostgreSQL writers run side by side, and a position taken at insert would let a writer that
 * commits later show a lower one. There the rows wait until the transaction's work is done,
 * then go in with one statement under a transaction-level advisory lock, the last before COMMIT:
 * the next writer numbers its rows only once this one has committed (or rolled back, leaving a
 * gap, which a reader skips). The lock is held for one insert; the transaction takes no row
 * lock after it, so it cannot deadlock on it.
 */
export function createChangeLog(sql: Sql, now: () => string) {
  const isDeferred = sql.dialect.engine === 'postgres';
  const pending: ChangeRow[] = [];
  // Changes the running transaction logged, kept or flushed: for the store's commit listeners.
  let logged = 0;

  /** Logs changes of the running transaction, in order. */
  async function addAll(changes: readonly ChangeRow[]): Promise<void> {
    if (isDeferred) {
      for (const change of changes) pending.push(change);
    } else {
      const committedAt = now();
      const rows = changes.map((change) => ({ ...change, committed_at: committedAt }));
      await sql.insertRows(ROW_INSERTS.changes, rows);
    }
    logged += changes.length;
  }

  return {
    /** Logs a change of the running transaction. */
    add: (change: ChangeRow) => addAll([change]),
    addAll,
    /**
     * Runs `work` in a savepoint (see withSavepoint): when it throws, the changes it logged are
     * dropped with the rest of what it wrote.
     */
    async savepoint<T>(work: () => Promise<T>): Promise<T> {
      const mark = { pending: pending.length, logged };
      try {
        return await withSavepoint(sql, work);
      } catch (error) {
        pending.length = mark.pending;
        logged = mark.logged;
        throw error;
      }
    },
    /** Forgets what a transaction that did not commit logged (a new one starts). */
    reset(): void {
      pending.length = 0;
      logged = 0;
    },
    /** How many changes the running transaction has logged. */
    loggedCount: () => logged,
    /** Writes the logged changes: the transaction's last statements before COMMIT. */
    async flush(): Promise<void> {
      if (pending.length === 0) return;
      await sql.run(`SELECT pg_advisory_xact_lock(${CHANGE_POSITION_LOCK})`);
      const committedAt = now();
      const rows = pending.map((change) => ({ ...change, committed_at: committedAt }));
      await sql.run(SET.insertChanges, { rows: JSON.stringify(rows) });
      pending.length = 0;
    },
  };
}

/** A transaction's change log. */
export type ChangeLog = ReturnType<typeof createChangeLog>;
