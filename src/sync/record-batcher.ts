import { isWriteConflict } from '../db/conflicts.js';
import type { Store } from '../db/store.js';
import { writeRecords, type RecordWrite, type RefreshOutcome } from './refresh.js';
import { SETS_IN_FLIGHT } from './pool.js';
import { createRequestClaims, UNCLAIMED, type RequestClaims } from './request-claims.js';

/** Gathers the records of concurrent detail fetches, and stores each gathering as one set. */
export interface RecordBatcher {
  /**
   * Stores `record` with the others that arrive meanwhile; resolves with its outcome and the
   * drifted members it recorded once the transaction that holds it has committed.
   */
  store(record: RecordWrite): Promise<{ outcome: RefreshOutcome; drifted: number }>;
  /** Stores what is gathered now, without waiting out the gathering: no more records are coming. */
  flushNow(): void;
}

/**
 * Records a cycle's fetches may leave waiting to be written before a fetch slot waits too
 * (see pool.ts, createTail): the size of a backfill's set, so what they hold stays within what
 * a set holds.
 */
export const UNWRITTEN_RECORDS = 100;

/** Records a batcher's caller may leave unwritten: a set's worth for each set in flight. */
export const unwrittenLimit = (store: Store): number =>
  UNWRITTEN_RECORDS * SETS_IN_FLIGHT[store.db.engine];

/**
 * How long the first record of a set waits for others before the set is written. A set's
 * transaction costs about the same for two records as for ten. On SQLite nothing arrives while a
 * set is written, so sets of one turn of the event loop held two records each on a first sync:
 * 86 sets for 176 details, whose BEGIN, COMMIT and per-table statements were a tenth of its CPU.
 * At 10 ms the same sync writes 18 sets (measured side by side: 7 to 8 % less wall time, and
 * less WAL for the close to checkpoint). At 50 ms a first sync of 273 requests commits 11 write
 * transactions instead of 30, its SQL takes 70 to 128 ms instead of 99 to 178, and the close's
 * checkpoint 39 to 43 ms instead of 49 to 60 (30 pairs side by side: 6 % less wall time on
 * average, 3 % at the median). A poll cycle's changes reach the feed that much later, which its
 * interval of minutes dwarfs; webhooks do not come this way. A backfill's sets fill to
 * UNWRITTEN_RECORDS long before.
 */
export const GATHER_MS = 50;

/** Starts the gathering's timer; returns what cancels it. Injected by tests. */
export type GatherTimer = (fire: () => void, ms: number) => () => void;

const realTimer: GatherTimer = (fire, ms) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

interface Pending {
  record: RecordWrite;
  resolve(written: { outcome: RefreshOutcome; drifted: number }): void;
  reject(error: unknown): void;
}

/**
 * Group commit in sets: records gather for GATHER_MS, or until UNWRITTEN_RECORDS (or `maxBatch`,
 * if fewer) wait, or until the caller calls flushNow. Records that arrive while sets are being
 * written wait for the next one, which starts at once if it fills a set and fewer than
 * `setsInFlight` are being written (two on PostgreSQL: the next set is planned while the one
 * before waits on its round trips; sets holding the same request take turns, see
 * request-claims.ts). Each set is written by writeRecords as one batch
 * (requests.writeMany: a few statements per table, not a savepoint and some twenty statements
 * per record). A write conflict runs the set's transaction again, on one budget
 * (Store.transaction, conflicts.ts). Any other failure, a record the engine refuses, fails the
 * set: its records then go one per transaction, so that only the one at fault fails.
 */
export function createRecordBatcher(
  store: Store,
  {
    maxBatch = 250,
    timer = realTimer,
    setsInFlight = SETS_IN_FLIGHT[store.db.engine],
    claims = setsInFlight > 1 ? createRequestClaims() : UNCLAIMED,
  }: {
    maxBatch?: number;
    timer?: GatherTimer;
    /**
     * Sets written at once (default SETS_IN_FLIGHT for the store's engine): on PostgreSQL the
     * next set is planned while the one before waits on its round trips.
     */
    setsInFlight?: number;
    /**
     * Sets written beside each other that may hold the same requests (request-claims.ts): this
     * batcher's own, when it writes several at once, and those of writers beside it.
     */
    claims?: RequestClaims;
  } = {},
): RecordBatcher {
  let queue: Pending[] = [];
  let inFlight = 0;
  let cancelGathering: (() => void) | undefined;
  /** flushNow was called: nothing more is coming, so nothing waits to gather. */
  let isFinal = false;
  // Gathering longer would only keep the fetch slots waiting (see UNWRITTEN_RECORDS).
  const fullSet = Math.min(maxBatch, UNWRITTEN_RECORDS);

  const writeSet = async (batch: readonly Pending[]) => {
    const records = batch.map((item) => item.record);
    const written = await claims.hold(
      records.map(({ record }) => record.request_id),
      () => store.transaction((tx) => writeRecords(tx, records)),
    );
    return () =>
      batch.forEach((item, index) =>
        item.resolve({ outcome: written.outcomes[index]!, drifted: written.drifted[index]! }),
      );
  };

  /**
   * Writes a set; when the engine refuses it, its records one per transaction, so that only the
   * one at fault fails. `done` is told before the records hear of it: what arrived meanwhile is
   * weighed first, as their callers may add more.
   */
  const writeOrIsolate = async (batch: readonly Pending[], done: () => void) => {
    try {
      const resolve = await writeSet(batch);
      done();
      resolve();
    } catch (error) {
      // A conflict that outlasted the transaction's retries is no record's fault: the records
      // fail together, as they would one by one.
      if (batch.length === 1 || isWriteConflict(error)) {
        done();
        for (const item of batch) item.reject(error);
        return;
      }
      for (const item of batch) await writeSet([item]).then((resolve) => resolve(), item.reject);
      done();
    }
  };

  /** Writes the next set (up to maxBatch of what waits); gathers again once it is written. */
  const startSet = () => {
    cancelGathering?.();
    cancelGathering = undefined;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    inFlight += 1;
    void writeOrIsolate(batch, () => {
      inFlight -= 1;
      gather();
    });
  };

  /**
   * Writes what waits while it fills a set (or nothing more is coming) and a set may start;
   * otherwise, with no set being written, waits for more. Records that arrive while sets are
   * written wait for the next one.
   */
  const gather = () => {
    while (inFlight < setsInFlight && queue.length >= (isFinal ? 1 : fullSet)) startSet();
    if (inFlight === 0 && queue.length > 0) cancelGathering ??= timer(onGathered, GATHER_MS);
  };
  const onGathered = () => {
    cancelGathering = undefined;
    if (inFlight < setsInFlight && queue.length > 0) startSet();
  };

  return {
    store(record) {
      return new Promise((resolve, reject) => {
        queue.push({ record, resolve, reject });
        gather();
      });
    },
    flushNow() {
      isFinal = true;
      gather();
    },
  };
}
