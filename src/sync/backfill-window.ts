import type { RequestState } from '../config/index.js';
import type { RunCounts } from '../db/store/run-store.js';
import { describeError, isTransportError } from '../errors.js';
import { isoFromMs } from '../time.js';
import type { BackfillDeps } from './backfill.js';
import { needsDetail } from './needs-detail.js';
import { listFieldsOf } from './normalize.js';
import type { DetailsPage, ListItem, ListState, Rejected } from './ports.js';
import { createTail, forEachConcurrently, readAhead, SETS_IN_FLIGHT } from './pool.js';
import { createRecordBatcher, unwrittenLimit } from './record-batcher.js';
import {
  pendingOf,
  quarantineIn,
  storeRecord,
  storeRecords,
  tallyOutcome,
  type RefreshOutcome,
  type PendingRecord,
} from './refresh.js';
import type { TimeWindow } from './window.js';

/**
 * Records written per set. A set's records, their rows and its plan live together until it
 * commits, and at 250 the backfill's peak RSS grew with the run (100,000 requests against 10,000:
 * 1.15 on SQLite, 1.21 on PostgreSQL); at 100 it stays flat (1.01, 1.10), with the same
 * PostgreSQL rate (93,185 requests in 101 s against 100 s, measured side by side).
 */
const DEFAULT_BATCH_SIZE = 100;

/*
 * One backfill window, state by state. The guarantee and its limits are in docs/sync.md
 * ("What a backfill catches"); in short:
 *
 * - States with a partial list: the partial list is read first, so each page record is stored
 *   with a last_updated no newer than its content (read the other way round, a newer
 *   last_updated with older content would hide a change from every later poll). Pages shift
 *   while they are read, so after the pages the partial list is read again: whatever it shows
 *   that the store does not hold as listed (appeared, moved onto a page already read, edited
 *   since, or read too soon to be settled) has its detail fetched.
 * - awaiting has no partial list: when `pages` or page 1 changed while the pages were read, the
 *   pages are read again, up to three passes in all.
 */

/** Imports one window; returns the requests stored (new or changed). */
export async function importWindow(
  deps: BackfillDeps,
  window: TimeWindow,
  states: readonly RequestState[],
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<number> {
  let stored = 0;
  for (const state of states) {
    if (state === 'awaiting') {
      stored += await importAwaiting(deps, window, counts, signal);
      continue;
    }
    const listed = await listPartial(deps, window, state, counts, signal);
    const pass = await importPages(deps, window, state, listed, counts, signal);
    const again = await reconcileWindow(deps, window, state, counts, signal);
    stored += pass.stored + again.stored;
    const missed = again.ids.filter((id) => !pass.seen.has(id));
    counts.requestsSeen += pass.seen.size + missed.length;
  }
  return stored;
}

/**
 * Reads the window's partial list and fetches the detail of every listed request whose stored
 * row does not match it (see needsDetail). Used after a window's pages and, at the end of a
 * backfill, over every window it imported: both catch what moved while others were read.
 */
export async function reconcileWindow(
  deps: BackfillDeps,
  window: TimeWindow,
  state: ListState,
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<{ stored: number; ids: string[] }> {
  const listed = await listPartial(deps, window, state, counts, signal);
  const summaries = await deps.store.read((tx) => tx.requests.summaries([...listed.keys()]));
  const stale = [...listed.values()].filter((item) => needsDetail(item, summaries.get(item.id)));
  const stored = await fetchDetails(deps, stale, counts, signal);
  return { stored, ids: [...listed.keys()] };
}

/** One pass over a state's pages, each record stored with its partial-list fields if listed. */
async function importPages(
  deps: BackfillDeps,
  window: TimeWindow,
  state: RequestState,
  listed: ReadonlyMap<string, ListItem>,
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<{ stored: number; seen: Set<string>; pagesChanged: boolean; first?: string }> {
  const seen = new Set<string>();
  let stored = 0;
  let batch: PendingRecord[] = [];
  let pagesAtStart: number | undefined;
  let pagesChanged = false;
  let first: string | undefined;
  // Sets being written while the pages go on; the first failure ends the pass once they settle.
  const writes = createTail(SETS_IN_FLIGHT[deps.store.db.engine]);
  let failure: { error: unknown } | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    const set = batch;
    batch = [];
    await writes.add(
      writeBatch(deps, set, counts).then(
        (written) => void (stored += written),
        (error: unknown) => void (failure ??= { error }),
      ),
    );
    if (failure) throw failure.error;
  };
  // One page asked for ahead, not the client's default: the backfill's windows already go at
  // once to fill the call slots, and every page held ahead is memory (row 8 of the bench: the
  // default's several pages per window added 3 to 4 MB to a backfill's peak).
  const pages = deps.client.listRequestDetails({
    from: window.fromMs,
    to: window.toMs,
    state,
    signal,
    pagesAhead: 1,
  });
  try {
    for await (const page of readAhead(pages)) {
      pagesAtStart ??= page.pages;
      if (page.pages !== pagesAtStart) pagesChanged = true;
      first ??= signatureOf(page);
      page.items.forEach((record, index) => {
        // Edits move requests between pages while we read: a repeat is dropped, a miss is
        // caught by reading the partial list again (or, for awaiting, the pages).
        if (seen.has(record.request_id)) return;
        seen.add(record.request_id);
        const item = listed.get(record.request_id);
        batch.push({
          record,
          raw: page.raws[index],
          list: item ? listFieldsOf(item) : { state },
          drift: page.drifts[index],
          readAt: isoFromMs(page.readAtMs),
          ...(page.texts && { text: page.texts[index]! }),
        });
      });
      if (page.rejected.length > 0) {
        // After the sets before it, as when they were written one at a time: a record of one of
        // them that moved and came back malformed is quarantined after its stored copy.
        await writes.drain();
        await quarantineAll(deps, page.rejected, counts);
      }
      if (batch.length >= (deps.batchSize ?? DEFAULT_BATCH_SIZE)) await flush();
    }
    await flush();
  } finally {
    // Whatever ends the pass (the last page, an abort, a failed call), no write outlives it.
    await writes.drain();
  }
  if (failure) throw failure.error;
  return { stored, seen, pagesChanged, ...(first !== undefined && { first }) };
}

/** Most passes over the awaiting pages of one window while they keep moving. */
const MAX_AWAITING_PASSES = 3;

/**
 * awaiting: the pages, and another pass while they shifted under the last one: `pages` changed
 * between responses, or page 1 reads differently once the pass is done. Each record a pass reads
 * is stored, so a request missed by one pass because it moved is caught by the next.
 */
async function importAwaiting(
  deps: BackfillDeps,
  window: TimeWindow,
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<number> {
  const none = new Map<string, ListItem>();
  const seen = new Set<string>();
  let stored = 0;
  for (let pass = 1; ; pass += 1) {
    const result = await importPages(deps, window, 'awaiting', none, counts, signal);
    stored += result.stored;
    for (const id of result.seen) seen.add(id);
    if (pass === MAX_AWAITING_PASSES) break;
    const firstNow = await firstPage(deps, window, signal);
    const isMoved =
      result.pagesChanged || (firstNow !== undefined && signatureOf(firstNow) !== result.first);
    if (!isMoved) break;
    deps.log.debug(
      { window: isoFromMs(window.fromMs), pass },
      'awaiting pages moved; reading again',
    );
  }
  counts.requestsSeen += seen.size;
  return stored;
}

async function firstPage(
  deps: BackfillDeps,
  window: TimeWindow,
  signal?: AbortSignal,
): Promise<DetailsPage | undefined> {
  const pages = deps.client.listRequestDetails({
    from: window.fromMs,
    to: window.toMs,
    state: 'awaiting',
    signal,
  });
  // Leaving the loop after the first page ends the iteration: no further page is requested.
  for await (const page of pages) return page;
  return undefined;
}

/** What a page shows: its page count and its records as sent. */
function signatureOf(page: DetailsPage): string {
  return JSON.stringify([page.pages, page.raws, page.rejected.map((r) => r.raw)]);
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
  await quarantineAll(deps, rejected, counts);
  return new Map(items.map((item) => [item.id, item]));
}

/** Quarantines a call's malformed records, in one transaction. */
async function quarantineAll(
  deps: BackfillDeps,
  rejected: readonly Rejected[],
  counts: RunCounts,
): Promise<void> {
  if (rejected.length === 0) return;
  await deps.store.transaction(async (tx) => {
    for (const record of rejected) await quarantineIn(tx, record, 'backfill');
  });
  counts.requestsQuarantined += rejected.length;
}

/** One write transaction for a batch of records: hundreds of requests, a few milliseconds. */
async function writeBatch(
  deps: BackfillDeps,
  batch: PendingRecord[],
  counts: RunCounts,
): Promise<number> {
  const outcomes = await storeRecords(deps.store, batch, {
    source: 'backfill',
    observedAt: deps.store.now(),
    counts,
    ...(deps.claims && { claims: deps.claims }),
  });
  outcomes.forEach((outcome) => tallyOutcome(counts, outcome));
  return outcomes.filter((outcome) => outcome === 'new' || outcome === 'changed').length;
}

/**
 * Fetches and stores the details of listed requests. A 403 here is skipped, not marked: a
 * backfill records what it sees and infers nothing from what it does not.
 */
async function fetchDetails(
  deps: BackfillDeps,
  items: ListItem[],
  counts: RunCounts,
  signal?: AbortSignal,
): Promise<number> {
  let stored = 0;
  // A fetch slot moves on while its record waits for the set's commit (see poll.ts).
  const writer = createRecordBatcher(deps.store, deps.claims && { claims: deps.claims });
  const writes = createTail(unwrittenLimit(deps.store));
  const fail = (requestId: string, error: unknown) => {
    counts.requestsFailed += 1;
    deps.log.warn({ requestId, err: describeError(error) }, 'backfill detail fetch failed');
  };
  const tally = (outcome: RefreshOutcome) => {
    tallyOutcome(counts, outcome);
    if (outcome === 'new' || outcome === 'changed') stored += 1;
  };
  await forEachConcurrently(
    items,
    deps.concurrency,
    async (item) => {
      try {
        const result = await deps.client.getRequest(item.id, { signal });
        if (result.kind === 'rejected') {
          await quarantineAll(deps, [result.rejected], counts);
          return;
        }
        const outcome = storeRecord(
          deps.store,
          {
            ...pendingOf(result, listFieldsOf(item)),
            source: 'backfill',
            observedAt: deps.store.now(),
            counts,
          },
          writer,
        );
        await writes.add(outcome.then(tally, (error: unknown) => fail(item.id, error)));
      } catch (error) {
        if (isTransportError(error, 'api.not_available')) return;
        fail(item.id, error);
      }
    },
    signal,
  );
  // The last records need not wait out the gathering: no fetch is left to add to their set.
  writer.flushNow();
  await writes.drain();
  return stored;
}
