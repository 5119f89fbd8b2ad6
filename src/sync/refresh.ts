import type { Drift } from '../api/contract.js';
import { isTransportError } from '../errors.js';
import { isoFromMs } from '../time.js';
import type { WriteOutcome, WriteSource } from '../mirror/observations.js';
import type { RecordDrift } from '../db/store/drift-store.js';
import type { RunCounts } from '../db/store/run-store.js';
import { unstorableTextIn, type UnstorableText } from '../db/sql.js';
import type { Store, StoreTx } from '../db/store.js';
import type { RecordBatcher } from './record-batcher.js';
import { normalizeDetail, type DetailLike, type ListFields } from './normalize.js';
import type { DetailResult, Rejected, SyncClient } from './ports.js';
import { UNCLAIMED, type RequestClaims } from './request-claims.js';

/** What refreshing one request from its detail did ('unavailable': newly marked so). */
export type RefreshOutcome = WriteOutcome | 'unavailable' | 'quarantined';

/** A record with what a list said of it, ready to store. */
export interface PendingRecord {
  record: DetailLike;
  raw: unknown;
  list?: ListFields;
  /** Members that drifted from the documented shape (recorded in schema_drift). */
  drift?: readonly Drift[];
  /** When the service read the record, on its clock (canonical ISO); see src/mirror/settled.ts. */
  readAt?: string;
  /** The record as JSON text, when the client kept it (else it is serialized here). */
  text?: string;
}

/**
 * Stores records, each with its rows, in one transaction (a page or a batch of hundreds takes a
 * few milliseconds), and forgets their quarantined copies. Outcomes come back in order. The list's
 * last_updated is stored with the detail it came with, so a failed fetch leaves the old value and
 * the next cycle fetches again.
 */
export async function storeRecords(
  store: Store,
  records: readonly PendingRecord[],
  {
    source,
    observedAt,
    counts,
    isCompared = false,
    claims = UNCLAIMED,
  }: {
    source: WriteSource;
    observedAt: string;
    counts?: RunCounts;
    /**
     * The caller compared these records with the mirror already and found them not held as
     * sent (listRequestDetails' isKnown): comparing again would only repeat that statement.
     */
    isCompared?: boolean;
    /** Sets written beside this one that may hold the same requests (see request-claims.ts). */
    claims?: RequestClaims;
  },
): Promise<RefreshOutcome[]> {
  if (records.length === 0) return [];
  // An idle cycle rereads every awaiting request: one whose text and list state equal what is
  // stored is skipped before it is normalized, and a page of those opens no write transaction.
  // Only for records that carry nothing but their state: a partial-list item's last_updated may
  // have moved while the detail reads the same, and it must still be stored.
  const texts = records.map(({ raw, text }) => text ?? JSON.stringify(raw));
  const isSame = isCompared
    ? records.map(() => false)
    : await compareWithStored(store, records, texts);
  if (isSame.every(Boolean)) return records.map((): RefreshOutcome => 'unchanged');
  const writes = records.map((record) => ({ ...record, source, observedAt }));
  const written = await claims.hold(
    records.map(({ record }) => record.request_id),
    () => store.transaction((tx) => writeRecords(tx, writes, { texts, isSame })),
  );
  if (counts) counts.schemaDrift += sum(written.drifted);
  return written.outcomes;
}

/**
 * Which records the mirror holds exactly (see storeRecords), one statement per list state the
 * state-only records carry: a page or a batch usually has one.
 */
async function compareWithStored(
  store: Store,
  records: readonly PendingRecord[],
  texts: readonly string[],
): Promise<boolean[]> {
  const same = records.map(() => false);
  const byState = new Map<string, { id: string; text: string; index: number }[]>();
  for (const [index, { record, list }] of records.entries()) {
    if (!isStateOnly(list)) continue;
    const group = byState.get(list.state) ?? [];
    group.push({ id: record.request_id, text: texts[index]!, index });
    byState.set(list.state, group);
  }
  if (byState.size === 0) return same;
  await store.read(async (tx) => {
    for (const [state, group] of byState) {
      const held = await tx.requests.sameRaw(group, state);
      group.forEach(({ index }, i) => (same[index] = held[i]!));
    }
  });
  return same;
}

/** Why a record holding text PostgreSQL cannot store is quarantined there. */
const UNSTORABLE_REASON: Record<UnstorableText, string> = {
  nul: 'a text member holds a NUL character (U+0000), which PostgreSQL cannot store; kept apart rather than stored altered',
  surrogate:
    'a text member holds half of a UTF-16 surrogate pair (a character cut in two), which PostgreSQL cannot store; kept apart rather than stored altered',
};

/** A record to store, with where and when it was observed. */
export type RecordWrite = PendingRecord & { source: WriteSource; observedAt: string };

/**
 * Writes records inside the caller's transaction (see storeRecords): those `isSame` marks are
 * left as they are, text PostgreSQL cannot hold is kept apart, never stored as something that
 * reads differently. Several records are written as one batch (requests.writeMany), with their
 * quarantined copies cleared in one statement; the tables end as writing them one by one would.
 * `drifted` is each record's count of drifted members recorded.
 */
export async function writeRecords(
  tx: StoreTx,
  records: readonly RecordWrite[],
  {
    texts = records.map(({ raw, text }) => text ?? JSON.stringify(raw)),
    isSame = [],
  }: { texts?: string[]; isSame?: boolean[] } = {},
): Promise<{ outcomes: RefreshOutcome[]; drifted: number[] }> {
  // Counted by the caller once committed: a transaction may run twice (see Store.transaction).
  const drifted = records.map(() => 0);
  const outcomes = records.map((): RefreshOutcome => 'unchanged');
  const stored: number[] = [];
  const keptApart = new Map<number, UnstorableText>();
  for (const index of records.keys()) {
    if (isSame[index]) continue;
    const unstorable = tx.sql.dialect.isAnyJsonStorable
      ? undefined
      : unstorableTextIn(texts[index]!);
    if (unstorable) keptApart.set(index, unstorable);
    else stored.push(index);
  }
  const observations = stored.map((index) => {
    const { record, list, readAt, source, observedAt } = records[index]!;
    return {
      normalized: normalizeDetail(record, list),
      rawJson: texts[index]!,
      source,
      observedAt,
      readAt: readAt ?? observedAt,
    };
  });
  const written = await tx.requests.writeMany(observations);
  stored.forEach((index, i) => (outcomes[index] = written[i]!));
  const idOf = (index: number) => records[index]!.record.request_id;
  await tx.quarantine.clearMany([...new Set(stored.map(idOf))]);
  // In one statement on PostgreSQL (see drift.recordMany): the service's records drift often.
  const drifts: RecordDrift[] = [];
  for (const index of stored) {
    const { drift, source, observedAt } = records[index]!;
    if (!drift || drift.length === 0) continue;
    drifts.push({ requestId: idOf(index), source, drift, at: observedAt });
    drifted[index] = drift.length;
  }
  await tx.drift.recordMany(drifts);
  // After the clears: one by one, a copy kept apart before a later stored record of its request
  // would have been cleared by it.
  for (const [index, unstorable] of keptApart) {
    outcomes[index] = 'quarantined';
    if (stored.some((later) => later > index && idOf(later) === idOf(index))) continue;
    const { raw, source } = records[index]!;
    const reason = UNSTORABLE_REASON[unstorable];
    await quarantineIn(tx, { requestId: idOf(index), reason, raw }, source);
  }
  return { outcomes, drifted };
}

function isStateOnly(list: ListFields | undefined): list is { state: string } {
  return (
    list?.state !== undefined &&
    list.last_updated_timestamp_utc === undefined &&
    list.event_dt_utc === undefined &&
    list.created_timestamp_utc === undefined
  );
}

/**
 * Stores one record (see storeRecords); with a batcher, as one of the set of records other
 * fetches finished meanwhile, written and committed together (see record-batcher.ts).
 */
export async function storeRecord(
  store: Store,
  write: RecordWrite & { counts?: RunCounts },
  writer?: RecordBatcher,
): Promise<RefreshOutcome> {
  if (!writer) return (await storeRecords(store, [write], write))[0]!;
  const { outcome, drifted } = await writer.store(write);
  if (write.counts) write.counts.schemaDrift += drifted;
  return outcome;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** A detail the client read, ready to store with what a list said of it. */
export function pendingOf(
  result: Extract<DetailResult, { kind: 'ok' }>,
  list?: ListFields,
): PendingRecord {
  return {
    record: result.record,
    raw: result.raw,
    list,
    drift: result.drift,
    readAt: isoFromMs(result.readAtMs),
  };
}

/**
 * Keeps a malformed record apart, to be retried when the service sends it again. A record refused
 * for drifted members (strict policy) has them recorded as well.
 */
export function quarantineRecord(
  store: Store,
  rejected: Rejected,
  source: WriteSource,
): Promise<void> {
  return store.transaction((tx) => quarantineIn(tx, rejected, source));
}

/** quarantineRecord inside a transaction the caller holds. */
export async function quarantineIn(
  tx: StoreTx,
  rejected: Rejected,
  source: WriteSource,
): Promise<void> {
  const at = tx.now();
  await tx.quarantine.add(rejected, source, at);
  if (rejected.requestId && rejected.drift && rejected.drift.length > 0)
    await tx.drift.record(rejected.requestId, source, rejected.drift, at);
}

/**
 * Fetches a request's detail and stores it. A 403 means the service no longer shows it to us:
 * the row is marked unavailable, never deleted. Other errors propagate to the caller's loop.
 */
export async function refreshRequest(
  deps: { client: SyncClient; store: Store },
  requestId: string,
  options: { list?: ListFields; source: WriteSource; signal?: AbortSignal; counts?: RunCounts },
): Promise<RefreshOutcome> {
  return (await fetchForWriter(deps, requestId, options)).outcome;
}

/**
 * refreshRequest in two steps: resolves once the detail is read (and a record the service
 * refused, or no longer shows us, recorded), with the promise of its outcome. With `writer`,
 * that promise settles when the set that holds the record commits (see record-batcher.ts), so
 * a cycle's fetches go on while their records wait to be written (see pool.ts, createTail).
 * A failed fetch rejects this call; a failed write rejects the outcome.
 */
export async function fetchForWriter(
  { client, store }: { client: SyncClient; store: Store },
  requestId: string,
  {
    list,
    source,
    signal,
    counts,
    writer,
  }: {
    list?: ListFields;
    source: WriteSource;
    signal?: AbortSignal;
    counts?: RunCounts;
    /** Store together with the other fetches of a cycle (see record-batcher.ts). */
    writer?: RecordBatcher;
  },
): Promise<{ outcome: Promise<RefreshOutcome> }> {
  const observedAt = store.now();
  try {
    const result = await client.getRequest(requestId, { signal });
    if (result.kind === 'rejected') {
      await quarantineRecord(store, result.rejected, source);
      return { outcome: Promise.resolve('quarantined') };
    }
    const write = { ...pendingOf(result, list), source, observedAt, counts };
    const outcome = storeRecord(store, write, writer);
    // Awaited by the caller a turn later; meanwhile a failed write is not an unhandled one.
    outcome.catch(() => undefined);
    return { outcome };
  } catch (error) {
    if (isTransportError(error, 'api.not_available')) {
      const isNewlyUnavailable = await store.transaction((tx) =>
        tx.requests.markUnavailable(requestId, observedAt, source),
      );
      return { outcome: Promise.resolve(isNewlyUnavailable ? 'unavailable' : 'unchanged') };
    }
    throw error;
  }
}

/** Adds one request's outcome to a run's counts. */
export function tallyOutcome(counts: RunCounts, outcome: RefreshOutcome): void {
  if (outcome === 'new') counts.requestsNew += 1;
  else if (outcome === 'changed') counts.requestsChanged += 1;
  else if (outcome === 'unavailable') counts.requestsUnavailable += 1;
  else if (outcome === 'quarantined') counts.requestsQuarantined += 1;
  else counts.requestsUnchanged += 1;
}
