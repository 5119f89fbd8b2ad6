import type { Clock } from '../clock.js';
import type { RequestState } from '../config/index.js';
import { POLL_COVERAGE_KEY, pollCoverageText, type PollCoverage } from '../mirror/intake-risk.js';
import type { StoredSummary } from '../mirror/observations.js';
import { emptyCounts, type RunCounts, type RunStatus } from '../db/store/run-store.js';
import type { Store } from '../db/store.js';
import { describeError, isTransportError } from '../errors.js';
import type { Logger, RateLimitedLogger } from '../log.js';
import { isoFromMs } from '../time.js';
import type { CallTally } from './call-tally.js';
import { needsDetail } from './needs-detail.js';
import { listFieldsOf, type ListFields } from './normalize.js';
import type { DetailsPage, ListItem, ListState, Rejected, SyncClient } from './ports.js';
import { createTail, forEachConcurrently, readAhead, SETS_IN_FLIGHT } from './pool.js';
import { createRecordBatcher, unwrittenLimit } from './record-batcher.js';
import {
  fetchForWriter,
  quarantineIn,
  storeRecords,
  tallyOutcome,
  type PendingRecord,
} from './refresh.js';
import { planChunks, pollWindow, type TimeWindow } from './window.js';

/** What a poll cycle needs. */
export interface PollDeps {
  client: SyncClient;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Warnings that repeat every cycle during an outage, logged once a minute with a count. */
  repeatedWarnings?: RateLimitedLogger;
  calls: CallTally;
  settings: {
    windowPastHours: number;
    windowFutureHours: number;
    states: readonly RequestState[];
    concurrency: number;
    /** Split a state's window when more than this many requests are stored in it. */
    listChunkRequests: number;
  };
}

/** How a cycle ended. */
export interface CycleResult {
  runId: number;
  status: RunStatus;
  counts: RunCounts;
  /** True when every list call succeeded: only then are vanished requests looked for. */
  isListComplete: boolean;
  /**
   * True when list calls failed and every one of them because its endpoint is gone as a whole
   * (404 or 410): the service has retired the polling API.
   */
  isPollingRetired: boolean;
  error?: string;
}

/** Key in sync_state of the end time of the last cycle that completed every list call. */
export const LAST_SUCCESS_KEY = 'last_success_at';

/**
 * One poll cycle: list every polled state in the window, fetch details only for requests that are
 * new or whose listed state or last_updated differs from what is stored, look for stored
 * requests that no list returns any more, and record the run.
 */
export async function runPollCycle(deps: PollDeps, signal?: AbortSignal): Promise<CycleResult> {
  const { store, clock, settings } = deps;
  const window = pollWindow(clock.now(), settings.windowPastHours, settings.windowFutureHours);
  const range = { from: isoFromMs(window.fromMs), to: isoFromMs(window.toMs) };
  const startedAt = store.now();
  const runId = await store.transaction((tx) =>
    tx.runs.start({ kind: 'poll', startedAt, windowFrom: range.from, windowTo: range.to }),
  );
  const callsAtStart = deps.calls.snapshot();
  const counts = emptyCounts();
  const errors: string[] = [];
  let isListComplete = true;
  let listsGone = 0;
  const listFailed = (state: string, error: unknown) => {
    isListComplete = false;
    if (isTransportError(error, 'api.endpoint_gone')) listsGone += 1;
    errors.push(`list ${state}: ${describeError(error).message}`);
    warn(deps, { state, err: describeError(error) }, 'list call failed');
  };

  const stored = new Map(
    (await store.read((tx) => tx.requests.summariesInWindow(range.from, range.to))).map((row) => [
      row.request_id,
      row,
    ]),
  );
  const listed = new Map<string, ListItem>();
  // Listed but not comparable by list item: awaiting records (full list) and malformed list
  // items (quarantined). Neither may be taken for vanished.
  const seenOtherwise = new Set<string>();
  // The cycle's list calls go out at once, as many as the client's concurrency lets through:
  // one after another, each waited out a round trip to the service. What they answer is still
  // taken in the order one at a time would take it: the partial lists state by state and chunk
  // by chunk, then the awaiting pages. So the cycle's outcome does not depend on which answer
  // came first (a request listed twice while it moved keeps the later list's item).
  const partialStates = settings.states.filter((state) => state !== 'awaiting');
  const calls = planListCalls(deps, partialStates, window, stored);
  let partialTaken!: () => void;
  const afterPartial = new Promise<void>((resolve) => (partialTaken = resolve));
  let awaitingPass: Promise<{ error: unknown } | undefined> | undefined;
  const readAwaiting = () => {
    if (!settings.states.includes('awaiting')) return;
    awaitingPass ??= syncAwaiting(deps, window, stored, seenOtherwise, counts, afterPartial, signal)
      .then(() => undefined)
      .catch((error: unknown) => ({ error }));
  };
  // The first call goes alone, and the others at once only when it was answered. While the
  // service fails, the cycle asks one thing at a time, each call's retries backing off: going
  // out at once would multiply an outage's calls by the concurrency.
  const isAnswering =
    calls.length === 0 || !('error' in (await makeListCall(deps, calls[0]!, signal)));
  if (isAnswering) readAwaiting();
  await forEachConcurrently(calls.slice(1), isAnswering ? settings.concurrency : 1, (call) =>
    makeListCall(deps, call, signal).then(() => undefined),
  );
  for (const state of partialStates) {
    const answers = calls.filter((call) => call.state === state).map((call) => call.answer!);
    try {
      await takeListAnswers(deps, answers, listed, seenOtherwise, counts);
    } catch (error) {
      listFailed(state, error);
    }
  }
  partialTaken();
  readAwaiting();
  const awaitingFailure = await awaitingPass;
  if (awaitingFailure) listFailed('awaiting', awaitingFailure.error);

  // Fetch what changed; then, only after a complete pass, what vanished.
  // Listed but outside the stored window (its event time moved in): read their rows by id.
  const outside = [...listed.keys()].filter((id) => !stored.has(id));
  if (outside.length > 0) {
    const found = await store.read((tx) => tx.requests.summaries(outside));
    for (const id of outside) {
      const row = found.get(id);
      if (row) stored.set(id, row);
    }
  }
  const toFetch = [...listed.values()].filter((item) => needsDetail(item, stored.get(item.id)));
  counts.requestsSeen = listed.size + seenOtherwise.size;
  counts.requestsUnchanged += listed.size - toFetch.length;
  const fetches: { id: string; list?: ListFields }[] = toFetch.map((item) => ({
    id: item.id,
    list: listFieldsOf(item),
  }));
  if (isListComplete && !signal?.aborted) {
    for (const row of stored.values()) {
      if (isVanished(row, settings.states, listed, seenOtherwise))
        fetches.push({ id: row.request_id });
    }
  }
  // The details that arrive together are stored in one transaction, each request atomic; a
  // fetch slot moves on to the next id while its record waits for the set's commit.
  const writer = createRecordBatcher(store);
  const writes = createTail(unwrittenLimit(store));
  const fail = (id: string, error: unknown) => {
    counts.requestsFailed += 1;
    errors.push(`detail ${id}: ${describeError(error).code}`);
    warn(
      deps,
      { requestId: id, err: describeError(error) },
      'detail fetch failed; retried next cycle',
      `detail:${describeError(error).code}`,
    );
  };
  await forEachConcurrently(
    fetches,
    settings.concurrency,
    async ({ id, list }) => {
      try {
        const { outcome } = await fetchForWriter(deps, id, {
          list,
          source: 'poll',
          signal,
          counts,
          writer,
        });
        await writes.add(
          outcome.then(
            (stored) => tallyOutcome(counts, stored),
            (error: unknown) => fail(id, error),
          ),
        );
      } catch (error) {
        fail(id, error);
      }
    },
    signal,
  );
  // The last records need not wait out the gathering: no fetch is left to add to their set.
  writer.flushNow();
  await writes.drain();

  const result = await finishCycle(deps, {
    runId,
    counts,
    callsAtStart,
    errors,
    isListComplete,
    signal,
    coverage: {
      started_at: startedAt,
      window_from: range.from,
      window_to: range.to,
      states: [...settings.states],
    },
  });
  // Retired as a whole: every polled state's list answered 404 or 410. One endpoint gone while
  // another answers is a fault to report, not a retirement to act on.
  const isPollingRetired = listsGone > 0 && listsGone === settings.states.length;
  return { ...result, isPollingRetired };
}

/** What one partial-list call answered, or how it failed. */
type ListAnswer = { items: ListItem[]; rejected: Rejected[] } | { error: unknown };

/** One partial-list call of a cycle, and once made, what it answered. */
interface ListCall {
  state: ListState;
  chunk: TimeWindow;
  answer?: ListAnswer;
}

/** The cycle's partial-list calls: each state's chunks, in order. */
function planListCalls(
  deps: PollDeps,
  states: readonly ListState[],
  window: TimeWindow,
  stored: Map<string, StoredSummary>,
): ListCall[] {
  return states.flatMap((state) => {
    const storedTimes = [...stored.values()]
      .filter((row) => row.list_state === state && row.event_dt_utc)
      .map((row) => Date.parse(row.event_dt_utc!));
    return planChunks(window, storedTimes, deps.settings.listChunkRequests).map((chunk) => ({
      state,
      chunk,
    }));
  });
}

/** Makes one partial-list call; a failure is its answer, not thrown: it fails its state only. */
async function makeListCall(
  deps: PollDeps,
  call: ListCall,
  signal?: AbortSignal,
): Promise<ListAnswer> {
  try {
    call.answer = await deps.client.listRequests({
      from: call.chunk.fromMs,
      to: call.chunk.toMs,
      state: call.state,
      signal,
    });
  } catch (error) {
    call.answer = { error };
  }
  return call.answer;
}

/**
 * Takes one state's list answers in chunk order: its items into `listed`, its malformed records
 * into the quarantine. The first failed call fails the state, as it would have stopped a state
 * listed one chunk at a time; what its other chunks answered is still taken.
 */
async function takeListAnswers(
  deps: PollDeps,
  answers: ListAnswer[],
  listed: Map<string, ListItem>,
  seenOtherwise: Set<string>,
  counts: RunCounts,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const answer of answers) {
    if ('error' in answer) {
      failure ??= answer;
      continue;
    }
    for (const item of answer.items) listed.set(item.id, item); // chunks share a boundary second: dedupe
    await quarantineListed(deps, answer.rejected, seenOtherwise, counts);
  }
  if (failure) throw failure.error;
}

/**
 * awaiting is not offered by the partial list, so its requests come whole from the full list's
 * pages and are written when their content differs from what is stored.
 */
async function syncAwaiting(
  deps: PollDeps,
  window: TimeWindow,
  stored: ReadonlyMap<string, StoredSummary>,
  seen: Set<string>,
  counts: RunCounts,
  /** Settles once the partial lists are taken: the pages are read before, and taken after. */
  afterPartial: Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  // A record the mirror holds exactly as sent (text, awaiting, available, not quarantined) is
  // passed over before the client checks it: most of an idle cycle's pages. The digests come
  // with the summaries read at the cycle's start (held_digest): a statement per page was a round
  // trip each on PostgreSQL. A row written since (a webhook applied meanwhile) is compared at
  // the next cycle, as the partial lists compare with the same summaries.
  const isHeld = (id: string, digest: string) => {
    const row = stored.get(id);
    return row?.list_state === 'awaiting' && row.held_digest === digest;
  };
  const isKnown = async (records: { id: string | null; digest: string }[]) =>
    records.map(({ id, digest }) => id !== null && !seen.has(id) && isHeld(id, digest));
  const pages = deps.client.listRequestDetails({
    from: window.fromMs,
    to: window.toMs,
    state: 'awaiting',
    signal,
    isKnown,
  });
  // A page's records are written while the next pages are read (on PostgreSQL: SETS_IN_FLIGHT).
  // No write outlives the pass, and the first failure ends it once the others have settled.
  const writes = createTail(SETS_IN_FLIGHT[deps.store.db.engine]);
  let failure: { error: unknown } | undefined;
  try {
    for await (const page of readAhead(pages)) {
      await afterPartial;
      if (failure) break;
      await awaitingPage(page);
    }
  } finally {
    await writes.drain();
  }
  if (failure) throw failure.error;

  async function awaitingPage(page: DetailsPage): Promise<void> {
    for (const id of page.known ?? []) {
      if (seen.has(id)) continue;
      seen.add(id);
      counts.requestsUnchanged += 1;
    }
    // One transaction per page: an idle cycle over thousands of awaiting broadcasts compares
    // each with what is stored and writes nothing, without a transaction per record.
    const fresh: PendingRecord[] = [];
    page.items.forEach((record, index) => {
      if (seen.has(record.request_id)) return; // pages shift while read: a repeat is not news
      seen.add(record.request_id);
      fresh.push({
        record,
        raw: page.raws[index],
        list: { state: 'awaiting' },
        drift: page.drifts[index],
        readAt: isoFromMs(page.readAtMs),
        ...(page.texts && { text: page.texts[index]! }),
      });
    });
    const written = storeRecords(deps.store, fresh, {
      source: 'poll',
      observedAt: deps.store.now(),
      counts,
      isCompared: true,
    });
    await writes.add(
      written.then(
        (outcomes) => outcomes.forEach((outcome) => tallyOutcome(counts, outcome)),
        (error: unknown) => void (failure ??= { error }),
      ),
    );
    if (page.rejected.length === 0) return;
    // Quarantined after the pages before are written, as one at a time would: a stored record
    // clears its request's quarantine, and the order of the two decides what stays.
    await writes.drain();
    if (failure) return;
    await quarantineListed(deps, page.rejected, seen, counts);
  }
}

/**
 * Malformed list records go to the quarantine. They were listed all the same: the request has not
 * vanished, and its stored version stays until the service sends it well-formed.
 */
async function quarantineListed(
  deps: PollDeps,
  rejected: Rejected[],
  seen: Set<string>,
  counts: RunCounts,
): Promise<void> {
  if (rejected.length === 0) return;
  await deps.store.transaction(async (tx) => {
    for (const record of rejected) await quarantineIn(tx, record, 'poll');
  });
  for (const record of rejected) {
    counts.requestsQuarantined += 1;
    if (record.requestId) seen.add(record.requestId);
  }
}

/**
 * A stored, available request of a polled state, inside the window, that no list returned. Its
 * detail tells whether it moved (state or time), or is gone (403).
 */
function isVanished(
  row: StoredSummary,
  states: readonly RequestState[],
  listed: Map<string, ListItem>,
  seenOtherwise: Set<string>,
): boolean {
  if (row.unavailable_at || !row.list_state) return false;
  if (!states.includes(row.list_state as RequestState)) return false;
  return !listed.has(row.request_id) && !seenOtherwise.has(row.request_id);
}

async function finishCycle(
  deps: PollDeps,
  run: {
    runId: number;
    counts: RunCounts;
    callsAtStart: ReturnType<CallTally['snapshot']>;
    errors: string[];
    isListComplete: boolean;
    signal?: AbortSignal;
    /** What the cycle compared with the service; recorded when it did all of it (status ok). */
    coverage: PollCoverage;
  },
): Promise<Omit<CycleResult, 'isPollingRetired'>> {
  const { store, log } = deps;
  const counts = { ...run.counts, ...deps.calls.since(run.callsAtStart) };
  const status: RunStatus = run.signal?.aborted
    ? 'aborted'
    : !run.isListComplete
      ? 'failed'
      : run.errors.length > 0
        ? 'partial'
        : 'ok';
  const error = run.errors.length > 0 ? summarizeErrors(run.errors) : undefined;
  const finishedAt = store.now();
  await store.transaction(async (tx) => {
    await tx.runs.finish(run.runId, { finishedAt, status, counts, error });
    if (run.isListComplete && status !== 'aborted')
      await tx.state.set(LAST_SUCCESS_KEY, finishedAt, finishedAt);
    // Every listed request compared and every differing one read: an intake gap that ended
    // before the cycle began puts none of them at risk (see mirror/intake-risk.ts).
    if (status === 'ok')
      await tx.state.set(POLL_COVERAGE_KEY, pollCoverageText(run.coverage), finishedAt);
  });
  const line = { runId: run.runId, status, ...counts };
  if (status === 'ok') log.info(line, 'poll cycle finished');
  else log.warn({ ...line, error }, 'poll cycle finished with errors');
  return { runId: run.runId, status, counts, isListComplete: run.isListComplete, error };
}

/** The first few errors and how many more: enough to act on, bounded in size. */
function summarizeErrors(errors: string[]): string {
  const shown = errors.slice(0, 5).join('; ');
  return errors.length > 5 ? `${shown}; and ${errors.length - 5} more` : shown;
}

/** A warning through the rate-limited logger when there is one. */
function warn(
  deps: PollDeps,
  fields: Record<string, unknown>,
  message: string,
  key?: string,
): void {
  if (deps.repeatedWarnings) deps.repeatedWarnings.warn(fields, message, key);
  else deps.log.warn(fields, message);
}
