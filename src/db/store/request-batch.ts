import {
  accountKey,
  facilityKey,
  planDetailBatch,
  type DetailBatchPlan,
} from '../../mirror/detail-batch.js';
import type { RequestWrite, StoredRow, WriteOutcome } from '../../mirror/observations.js';
import type { DetailRow } from '../../mirror/request-plan.js';
import { isWriteConflict } from '../conflicts.js';
import type { RowsInsert, Sql } from '../sql.js';
import type { ChangeLog } from './change-log.js';
import { REQUEST_SET_SQL as SET, requestBatchSql } from './request-batch-sql.js';
import { keepsIndexedColumns, requestSql, ROW_INSERTS } from './request-sql.js';
import type { WrittenCache } from './written-cache.js';
import { idsParam as idsParamOf } from '../set-sql.js';

/**
 * Stores a batch of detail observations: the stored rows of all its requests read in one
 * statement, the batch planned in pure code (src/mirror/detail-batch.ts), then written table by
 * table (one statement per table on PostgreSQL; see request-batch-sql.ts). The tables end as
 * writing the observations one at a time with `write` leaves them; `write` also serves when the
 * engine refuses the batch (see writeMany).
 */
export function createRequestBatch({
  sql,
  written,
  write,
  changes,
}: {
  sql: Sql;
  written: () => WrittenCache;
  write: (observation: RequestWrite) => Promise<WriteOutcome>;
  changes: ChangeLog;
}) {
  const q = requestBatchSql(sql.dialect);
  const one = requestSql(sql.dialect);
  const isPostgres = sql.dialect.engine === 'postgres';
  const idsParam = (ids: readonly string[]) => idsParamOf(sql.dialect, ids);
  const rowsParam = (rows: readonly object[]) => ({ rows: JSON.stringify(rows) });

  /** Writes rows: all in one statement on PostgreSQL, one statement each on SQLite. */
  async function writeRows(rows: readonly object[], all: string, each: string): Promise<void> {
    if (rows.length === 0) return;
    if (isPostgres) await sql.run(all, rowsParam(rows));
    else for (const row of rows) await sql.run(each, row);
  }

  /** Inserts rows: all in one statement on PostgreSQL, several to a statement on SQLite. */
  async function insertRows(rows: readonly object[], all: string, into: RowsInsert) {
    if (rows.length === 0) return;
    if (isPostgres) await sql.run(all, rowsParam(rows));
    else await sql.insertRows(into, rows);
  }

  async function selectRows(ids: readonly string[]): Promise<Map<string, StoredRow>> {
    const rows = await sql.all<StoredRow>(q.selectRows, idsParam(ids));
    return new Map(rows.map((row) => [row.request_id, row]));
  }

  /**
   * Upserts the requests rows; resolves to the ids of those that may have child rows: those
   * stored when read and, on PostgreSQL, where another transaction may have stored the request
   * since (with its child rows), those the upsert found stored.
   */
  async function upsertRows(rows: readonly DetailRow[], stored: ReadonlyMap<string, StoredRow>) {
    const mayHaveChildren = new Set(stored.keys());
    if (rows.length === 0) return mayHaveChildren;
    if (!isPostgres) {
      // One row per id: the narrow UPDATEs and the upserts touch distinct rows, in any order.
      const upserts: DetailRow[] = [];
      for (const row of rows) {
        if (keepsIndexedColumns(stored.get(row.request_id), row))
          await sql.run(one.updateKeepingIndexed, row);
        else upserts.push(row);
      }
      await sql.insertRows(ROW_INSERTS.requests, upserts);
      return mayHaveChildren;
    }
    const written = await sql.all<{ request_id: string; is_inserted: number }>(
      SET.upsertRequests,
      rowsParam(rows),
    );
    for (const row of written) if (!row.is_inserted) mayHaveChildren.add(row.request_id);
    return mayHaveChildren;
  }

  /** Writes the plan, table by table. */
  async function apply(plan: DetailBatchPlan, stored: ReadonlyMap<string, StoredRow>) {
    const mayHaveChildren = await upsertRows(plan.rows, stored);
    await writeRows(plan.touched, SET.touchRows, one.touchRow);
    const emptied = plan.replacedIds.filter((id) => mayHaveChildren.has(id));
    if (emptied.length > 0) {
      await sql.run(q.deleteLocations, idsParam(emptied));
      await sql.run(q.deleteFields, idsParam(emptied));
    }
    await insertRows(plan.locations, SET.insertLocations, ROW_INSERTS.locations);
    await insertRows(plan.fields, SET.insertFields, ROW_INSERTS.fields);
    await writeRows(plan.accounts, SET.upsertAccounts, one.upsertAccount);
    await writeRows(plan.facilities, SET.upsertFacilities, one.upsertFacility);
    await changes.addAll(plan.changes);
  }

  /**
   * `write` for each observation in turn, each in a savepoint. The one the engine refuses on its
   * own throws, as it does with `write`, and what it wrote is rolled back and not taken for
   * stored by the cache.
   */
  async function oneByOne(observations: readonly RequestWrite[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = [];
    for (const observation of observations) {
      try {
        outcomes.push(await changes.savepoint(() => write(observation)));
      } catch (error) {
        const { account, facility } = observation.normalized;
        if (account) written().forget(accountKey(account));
        if (facility) written().forget(facilityKey(facility));
        throw error;
      }
    }
    return outcomes;
  }

  /**
   * Stores the observations in order, as `write` would one after another; the outcomes come
   * back in the same order. One savepoint holds the batch's writes: when the engine refuses them
   * (a value it cannot hold, say), they are rolled back and the observations written one at a
   * time, so that the one at fault is the one that fails. A write conflict (PostgreSQL) is not a
   * refusal: it goes to the caller, whose retry runs the whole transaction again.
   */
  async function writeMany(observations: readonly RequestWrite[]): Promise<WriteOutcome[]> {
    if (observations.length === 0) return [];
    const ids = [...new Set(observations.map((o) => o.normalized.content.request_id))].sort();
    const stored = await selectRows(ids);
    const plan = planDetailBatch(stored, observations, (key) => written().get(key));
    const isNothingWritten =
      plan.rows.length === 0 && plan.touched.length === 0 && plan.changes.length === 0;
    if (isNothingWritten) return plan.outcomes;
    if (observations.length === 1) {
      // Alone, the observation at fault is known: its refusal goes to the caller as `write`'s
      // would, and the caller's transaction rolls back what it wrote. No savepoint: on
      // PostgreSQL each costs two round trips, and a detail fetched alone is the common case.
      await apply(plan, stored);
    } else {
      try {
        await changes.savepoint(() => apply(plan, stored));
      } catch (error) {
        if (isWriteConflict(error)) throw error;
        return oneByOne(observations);
      }
    }
    for (const [key, value] of plan.learned) written().set(key, value);
    return plan.outcomes;
  }

  return { writeMany };
}
