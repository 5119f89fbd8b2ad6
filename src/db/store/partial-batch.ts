import { accountKey } from '../../mirror/detail-batch.js';
import type { PartialRequestWrite, StoredRow, WriteOutcome } from '../../mirror/observations.js';
import {
  foldAccountNames,
  planPartialBatch,
  type AccountName,
  type PartialBatchPlan,
} from '../../mirror/partial-batch.js';
import type { PartialRow } from '../../mirror/request-plan.js';
import type { LocationRow } from '../schema/index.js';
import type { RowsInsert, Sql } from '../sql.js';
import type { ChangeLog } from './change-log.js';
import { PARTIAL_SET_SQL as PARTIAL, requestBatchSql } from './request-batch-sql.js';
import { keepsIndexedColumns, partialParams, requestSql, ROW_INSERTS } from './request-sql.js';
import type { WrittenCache } from './written-cache.js';
import { idsParam as idsParamOf } from '../set-sql.js';

/**
 * Stores partial observations (webhook data) of distinct requests as writePartial would one by
 * one: the stored rows and locations read in two statements, the batch planned in pure code, then
 * written table by table, the rows several to a statement (Sql.insertRows). The caller holds the
 * batch in a savepoint and falls back to writePartial per observation when the engine refuses it.
 */
export function createPartialBatch({
  sql,
  written,
  changes,
}: {
  sql: Sql;
  written: () => WrittenCache;
  changes: ChangeLog;
}) {
  const q = requestBatchSql(sql.dialect);
  const one = requestSql(sql.dialect);
  const isPostgres = sql.dialect.engine === 'postgres';
  const idsParam = (ids: readonly string[]) => idsParamOf(sql.dialect, ids);
  const rowsParam = (rows: readonly object[]) => ({ rows: JSON.stringify(rows) });

  async function read(ids: readonly string[]) {
    const rows = await sql.all<StoredRow>(q.selectRows, idsParam(ids));
    const stored = new Map(rows.map((row) => [row.request_id, row]));
    const locations = new Map<string, LocationRow[]>();
    if (stored.size > 0) {
      for (const location of await sql.all<LocationRow>(q.selectLocations, idsParam(ids))) {
        const list = locations.get(location.request_id) ?? [];
        list.push(location);
        locations.set(location.request_id, list);
      }
    }
    return { stored, locations };
  }

  async function writeAccountNames(names: readonly AccountName[]) {
    if (names.length === 0) return;
    if (isPostgres) {
      const folded = foldAccountNames(names);
      const guarded = folded.filter((f) => !f.isForced).map((f) => f.name);
      const forced = folded.filter((f) => f.isForced).map((f) => f.name);
      if (guarded.length > 0) await sql.run(PARTIAL.upsertAccountNames, rowsParam(guarded));
      if (forced.length > 0) await sql.run(PARTIAL.upsertAccountNamesForced, rowsParam(forced));
    } else for (const name of names) await sql.run(one.upsertAccountName, name);
    // The poll's cache would otherwise skip rewriting what it believes is already stored.
    for (const name of names) written().forget(accountKey(name));
  }

  async function writeRows(rows: readonly PartialRow[], stored: ReadonlyMap<string, StoredRow>) {
    if (!isPostgres) {
      for (const row of rows) {
        const isNarrow = keepsIndexedColumns(stored.get(row.request_id), row);
        await sql.run(
          isNarrow ? one.updatePartialKeepingIndexed : one.upsertPartial,
          partialParams(sql.dialect, row),
        );
      }
      return;
    }
    // Four statements at most: changed or not, raw_json sent as text or read from the event.
    const groups = new Map<RowsInsert, object[]>();
    for (const row of rows) {
      const raw = row.raw_json;
      const upserts = PARTIAL.upsertPartials[row.is_changed];
      const into = typeof raw === 'string' ? upserts.text : upserts.ofEvent;
      const group = groups.get(into) ?? [];
      group.push(typeof raw === 'string' ? row : { ...row, raw_json: raw.eventId });
      groups.set(into, group);
    }
    for (const [into, group] of groups) await sql.insertRows(into, group);
  }

  async function apply(plan: PartialBatchPlan, stored: ReadonlyMap<string, StoredRow>) {
    await writeAccountNames(plan.accountNames);
    await writeRows(plan.rows, stored);
    if (!isPostgres) {
      for (const { request_id: id, role } of plan.movedRoles)
        await sql.run(one.deleteLocation, { id, role });
    } else if (plan.movedRoles.length > 0)
      await sql.run(PARTIAL.deleteLocationRoles, rowsParam(plan.movedRoles));
    await sql.insertRows(ROW_INSERTS.locations, plan.locations);
    await changes.addAll(plan.changes);
  }

  /** Stores the observations (one per request); the outcomes come back in their order. */
  async function writePartialMany(
    observations: readonly PartialRequestWrite[],
  ): Promise<WriteOutcome[]> {
    if (observations.length === 0) return [];
    const ids = observations.map((o) => o.content.request_id).sort();
    if (new Set(ids).size !== ids.length) throw new Error('writePartialMany: a request twice');
    const { stored, locations } = await read(ids);
    const plan = planPartialBatch(stored, locations, observations);
    await apply(plan, stored);
    return plan.outcomes;
  }

  return { writePartialMany };
}
