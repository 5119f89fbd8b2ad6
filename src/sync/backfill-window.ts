import type { RequestState } from '../config/index.js';
import type { RunCounts } from '../db/run-store.js';
import { describeError, isTransportError } from '../errors.js';
import type { BackfillDeps } from './backfill.js';
import { listFieldsOf } from './normalize.js';
import type { ListItem, ListState } from './ports.js';
import { forEachConcurrently, readAhead } from './pool.js';
import {
  quarantineRecord,
  storeRecord,
  storeRecords,
  tallyOutcome,
  type PendingRecord,
} from './refresh.js';
import type { TimeWindow } from './window.js';

const DEFAULT_BATCH_SIZE = 250;

/**
 * Imports one window: for each state, the full list's pages (no detail call per request), deduped
 * by id, reconciled with the partial list where the state has one. Returns requests stored.
 *
 * The partial list is read first, on purpose: each record then comes from a page read after the
 * last_updated stored with it, so it is at least that new. Read the other way round, newer
 * last_updated with older content would hide a change from the poll cycle forever.
 */
export async function importWindow(
  deps: BackfillDeps,
  window: TimeWindow,
  states: readonly RequestState[],
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<number> {
  let stored = 0;
  for (const state of states) {
    const listed =
      state === 'awaiting'
        ? new Map<string, ListItem>()
        : await listPartial(deps, window, state, counts, signal);
    const seen = new Set<string>();
    let batch: PendingRecord[] = [];
    const flush = () => {
      stored += writeBatch(deps, batch, counts);
      batch = [];
    };
    const pages = deps.client.listRequestDetails({
      from: window.fromMs,
      to: window.toMs,
      state,
      signal,
    });
    for await (const page of readAhead(pages)) {
      page.items.forEach((record, index) => {
        // Edits move requests between pages while we read: a repeat is dropped, a miss is
        // caught below by the partial list.
        if (seen.has(record.request_id)) return;
        seen.add(record.request_id);
        const item = listed.get(record.request_id);
        batch.push({ record, raw: page.raws[index], list: item ? listFieldsOf(item) : { state } });
      });
      for (const rejected of page.rejected) {
        quarantineRecord(deps.store, rejected, 'backfill');
        counts.requestsQuarantined += 1;
      }
      if (batch.length >= (deps.batchSize ?? DEFAULT_BATCH_SIZE)) flush();
    }
    flush();
    const missed = [...listed.values()].filter((item) => !seen.has(item.id));
    stored += await fetchMissed(deps, missed, counts, signal);
    counts.requestsSeen += seen.size + missed.length;
  }
  return stored;
}

async function listPartial(
  deps: BackfillDeps,
  window: TimeWindow,
  state: ListState,
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<Map<string, ListItem>> {
  const { items, rejected } = await deps.client.listRequests({
    from: window.fromMs,
    to: window.toMs,
    state,
    signal,
  });
  for (const record of rejected) {
    quarantineRecord(deps.store, record, 'backfill');
    counts.requestsQuarantined += 1;
  }
  return new Map(items.map((item) => [item.id, item]));
}

/** One write transaction for a batch of records: hundreds of requests, a few milliseconds. */
function writeBatch(deps: BackfillDeps, batch: PendingRecord[], counts: RunCounts): number {
  const outcomes = storeRecords(deps.store, batch, {
    source: 'backfill',
    observedAt: deps.store.now(),
  });
  outcomes.forEach((outcome) => tallyOutcome(counts, outcome));
  return outcomes.filter((outcome) => outcome === 'new' || outcome === 'changed').length;
}

/**
 * Requests the partial list returned but the pages missed get their detail. A 403 here is skipped,
 * not marked: a backfill records what it sees and infers nothing from what it does not.
 */
async function fetchMissed(
  deps: BackfillDeps,
  missed: ListItem[],
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<number> {
  let stored = 0;
  await forEachConcurrently(
    missed,
    deps.concurrency,
    async (item) => {
      try {
        const result = await deps.client.getRequest(item.id, { signal });
        if (result.kind === 'rejected') {
          quarantineRecord(deps.store, result.rejected, 'backfill');
          counts.requestsQuarantined += 1;
          return;
        }
        const outcome = storeRecord(deps.store, {
          record: result.record,
          raw: result.raw,
          list: listFieldsOf(item),
          source: 'backfill',
          observedAt: deps.store.now(),
        });
        tallyOutcome(counts, outcome);
        if (outcome === 'new' || outcome === 'changed') stored += 1;
      } catch (error) {
        if (isTransportError(error, 'api.not_available')) return;
        counts.requestsFailed += 1;
        deps.log.warn(
          { requestId: item.id, err: describeError(error) },
          'backfill detail fetch failed',
        );
      }
    },
    signal,
  );
  return stored;
}
