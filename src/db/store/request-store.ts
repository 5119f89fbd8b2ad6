import { accountKey, facilityKey } from '../../mirror/detail-batch.js';
import { receivedDigest } from '../../mirror/digest.js';
import type {
  PartialRequestWrite,
  RequestWrite,
  StoredRow,
  StoredSummary,
  WriteOutcome,
  WriteSource,
} from '../../mirror/observations.js';
import {
  isPartialStale,
  planDetailWrite,
  planPartialWrite,
  planUnavailable,
} from '../../mirror/request-plan.js';
import type { AccountRow, FacilityRow, LocationRow } from '../schema/index.js';
import type { Sql } from '../sql.js';
import type { ChangeLog } from './change-log.js';
import { createPartialBatch } from './partial-batch.js';
import { createRequestBatch } from './request-batch.js';
import { keepsIndexedColumns, partialParams, requestSql, ROW_INSERTS } from './request-sql.js';
import type { WrittenCache } from './written-cache.js';

/**
 * Reads and writes of the requests table and its child rows, on one transaction's `sql`.
 * `written` is the running transaction's view of the accounts and facilities already stored;
 * `changes` takes its change-log rows (see change-log.ts).
 */
export function createRequestStore(sql: Sql, written: () => WrittenCache, changes: ChangeLog) {
  const q = requestSql(sql.dialect);
  // SQLite's write transaction shuts out every other writer, so a request absent when read is
  // still absent, without child rows (they go with their request: ON DELETE CASCADE), and the
  // deletes that replace them can be skipped. On PostgreSQL another transaction (the applier
  // beside a poll) may store the request after the read: its child rows must still be replaced.
  const hasWriterToItself = sql.dialect.engine === 'sqlite';
  const selectRow = (id: string) => sql.get<StoredRow>(q.selectRow, { id });
  /** Whether to write a row as an UPDATE that names no indexed column (see INDEXED_COLUMNS). */
  const isUpdateNarrow = (stored: StoredRow | undefined, row: object) =>
    sql.dialect.engine === 'sqlite' && keepsIndexedColumns(stored, row);

  /** Upserts a shared row (an account, a facility) unless it is known stored so. */
  async function writeShared(key: string, statement: string, row: object, at: string) {
    const value = JSON.stringify(row);
    if (written().get(key) === value) return;
    await sql.run(statement, { ...row, updated_at: at });
    written().set(key, value);
  }
  const writeAccount = (account: AccountRow, at: string) =>
    writeShared(accountKey(account), q.upsertAccount, account, at);
  const writeFacility = (facility: FacilityRow, at: string) =>
    writeShared(facilityKey(facility), q.upsertFacility, facility, at);

  /** Stores one observation. */
  async function write(observation: RequestWrite): Promise<WriteOutcome> {
    const { normalized, observedAt } = observation;
    const id = normalized.content.request_id;
    const stored = await selectRow(id);
    const plan = planDetailWrite(stored, observation);
    if (plan.outcome === 'stale') return 'stale';
    if (plan.outcome === 'unchanged') {
      if (plan.readAt !== null || plan.receivedDigest !== null) {
        await sql.run(q.touchRow, {
          request_id: id,
          read_at: plan.readAt,
          received_digest: plan.receivedDigest,
        });
      }
      return 'unchanged';
    }
    await sql.run(
      isUpdateNarrow(stored, plan.row) ? q.updateKeepingIndexed : q.upsertRequest,
      plan.row,
    );
    if (plan.isChildrenReplaced) {
      const mayHaveChildren = stored !== undefined || !hasWriterToItself;
      if (mayHaveChildren) await sql.run(q.deleteLocations, { id });
      await sql.insertRows(ROW_INSERTS.locations, normalized.locations);
      if (mayHaveChildren) await sql.run(q.deleteFields, { id });
      await sql.insertRows(ROW_INSERTS.fields, normalized.fields);
    }
    if (normalized.account) await writeAccount(normalized.account, observedAt);
    if (normalized.facility) await writeFacility(normalized.facility, observedAt);
    await changes.add(plan.change);
    return plan.outcome;
  }

  /** Stores a partial observation (see planPartialWrite). */
  async function writePartial(observation: PartialRequestWrite): Promise<WriteOutcome> {
    const id = observation.content.request_id;
    const stored = await selectRow(id);
    const isUnderLaterMark = observation.laterUnavailableAt !== undefined;
    if (isPartialStale(stored, observation.observedAt, isUnderLaterMark)) return 'stale';
    const storedLocations = stored ? await sql.all<LocationRow>(q.selectLocations, { id }) : [];
    const plan = planPartialWrite(stored, storedLocations, observation);
    if (plan.outcome === 'stale') return 'stale';
    if (observation.account) await writeAccountName(observation.account, observation.observedAt);
    if (plan.outcome === 'unchanged') return 'unchanged';
    await sql.run(
      isUpdateNarrow(stored, plan.row) ? q.updatePartialKeepingIndexed : q.upsertPartial,
      partialParams(sql.dialect, plan.row),
    );
    for (const role of plan.movedRoles) await sql.run(q.deleteLocation, { id, role });
    for (const location of observation.locations) {
      if (plan.movedRoles.includes(location.role)) await sql.run(q.insertLocation, location);
    }
    await changes.add(plan.change);
    return plan.outcome;
  }

  /** Upserts an account's name only, keeping the service levels and facilities polled. */
  async function writeAccountName(
    account: { account_id: string; name: string | null },
    at: string,
  ): Promise<void> {
    const changes = await sql.run(q.upsertAccountName, { ...account, updated_at: at });
    // The poll's cache would otherwise skip rewriting what it believes is already stored.
    if (changes > 0) written().forget(accountKey(account));
  }

  /** Marks a request the service no longer shows us (see planUnavailable); false: no change. */
  async function markUnavailable(
    requestId: string,
    at: string,
    source: WriteSource,
    options: { isGuarded?: boolean } = {},
  ): Promise<boolean> {
    const change = planUnavailable(await selectRow(requestId), at, source, options);
    if (!change) return false;
    await sql.run(q.setUnavailable, { request_id: requestId, unavailable_at: at });
    await changes.add(change);
    return true;
  }

  async function isSameRaw(requestId: string, rawJson: string, listState: string) {
    const row = await sql.get(q.isSameRaw, {
      request_id: requestId,
      digest: receivedDigest(rawJson),
      list_state: listState,
    });
    return row !== undefined;
  }

  const { writeMany } = createRequestBatch({ sql, written, write, changes });
  const { writePartialMany } = createPartialBatch({ sql, written, changes });

  return {
    write,
    /** Stores a batch of observations as `write` would one by one (see request-batch.ts). */
    writeMany,
    writePartial,
    /** writePartial for observations of distinct requests, in sets (see partial-batch.ts). */
    writePartialMany,
    markUnavailable,
    /** Stored summaries of requests whose event time lies in [from, to] (canonical ISO). */
    summariesInWindow: (from: string, to: string) =>
      sql.all<StoredSummary>(q.summariesInWindow, { from, to }),
    /** The stored summary of one request, if stored. */
    summary: (requestId: string) => sql.get<StoredSummary>(q.summary, { id: requestId }),
    /** The stored summaries of those of `requestIds` that are stored, by id, in one statement. */
    async summaries(requestIds: readonly string[]): Promise<Map<string, StoredSummary>> {
      if (requestIds.length === 0) return new Map();
      const rows = await sql.all<StoredSummary>(q.summaries, {
        ids: sql.dialect.engine === 'postgres' ? requestIds : JSON.stringify(requestIds),
      });
      return new Map(rows.map((row) => [row.request_id, row]));
    },
    /**
     * True when the stored row holds this record text (received before: its digest is stored)
     * and list state, is available and has nothing in quarantine: normalizing and writing it
     * again would change nothing.
     */
    isSameRaw,
    /**
     * isSameRaw for a page of records: true where the mirror holds the record. SQLite answers
     * each in microseconds; on PostgreSQL, where each statement is a round trip, one statement
     * answers them all. Only digests travel, not the texts.
     */
    async sameRaw(
      records: readonly { id: string; text: string }[],
      listState: string,
    ): Promise<boolean[]> {
      const same = records.map(() => false);
      if (sql.dialect.engine === 'sqlite') {
        for (const [index, { id, text }] of records.entries())
          same[index] = await isSameRaw(id, text, listState);
        return same;
      }
      if (records.length === 0) return same;
      // Text PostgreSQL cannot hold (a NUL, half a surrogate pair) is never stored as sent, so
      // its digest is never stored either: such a record is not held, and needs no exception.
      const rows = await sql.all<{ position: number | string }>(q.sameRaw, {
        ids: records.map((r) => r.id),
        digests: records.map((r) => receivedDigest(r.text)),
        list_state: listState,
      });
      for (const row of rows) same[Number(row.position) - 1] = true;
      return same;
    },
  };
}

/** The request store's interface. */
export type RequestStore = ReturnType<typeof createRequestStore>;
