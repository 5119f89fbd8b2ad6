import type { SchemaPolicy } from '../api/contract.js';
import type { Clock } from '../clock.js';
import type { Engine } from '../db/sql.js';
import type { Store } from '../db/store.js';
import { isRetriedConflict, isWriteConflict } from '../db/conflicts.js';
import type { EventStore, PendingEvent } from '../db/store/event-store.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { applyV2Event, v1RequestIds } from './apply-event.js';
import { applyInSets, isSettable, type DueEvent, type SettableEvent } from './apply-sets.js';
import { decideV2Event, prepareV2Event, type ApplyResult } from './prepare-event.js';
import type { FetchQueue } from './fetch-queue.js';
import { createHandoff, type ReceivedEvent } from './handoff.js';

/** Events read per query, at least. */
const BATCH = 100;
/**
 * Events applied per transaction, by engine. Written as sets, 100 hold the SQLite write lock
 * (which the receiver waits for) a few milliseconds, and 250 measured no faster there. On
 * PostgreSQL a transaction costs some twenty round trips and a commit whatever its size: 100
 * against 25 took the store bench's webhook row from 0.24 to 0.32 of its floor, and 250 against
 * 100 took row 4's path 7 % less time (500: no less again; docs/performance.md).
 */
const APPLY_BATCH: Record<Engine, number> = { sqlite: 100, postgres: 250 };
/**
 * Bytes of payloads parsed at intake held for the applier at most (handoff.ts): some 2,000 of the
 * service's 4.7 KB events, which take about as much parsed (3.9 KB each, measured).
 */
const HANDOFF_BYTES = 8 * 1024 * 1024;

/** A running applier of stored events; `wake` it after storing one. */
export interface EventApplier {
  /** Looks for stored events now. */
  wake(): void;
  /**
   * Holds a delivery's payload as the receiver parsed it, to be applied without reading it back
   * or parsing it again. Called inside the transaction that stores the delivery, once it is
   * known to be new, before the commit (see handoff.ts); `wake` follows the commit.
   */
  hold(event: ReceivedEvent): void;
  /** Lets go of held payloads whose deliveries were not stored after all (the commit failed). */
  drop(eventIds: readonly string[]): void;
  /** Resolves when every stored event is applied (events waiting to be retried aside). */
  idle(): Promise<void>;
  /** Stops applying; events not yet applied stay stored for the next start. */
  stop(): Promise<void>;
}

/**
 * Applies the events the receiver stored, in event_id order, from the table: so events stored
 * but not applied before a crash are applied at the next start. v2.0 events are applied in one
 * transaction each, with their processed mark; v1.0 events (cues, no data) are processed once
 * every detail fetch they asked for has been stored. A failed attempt leaves the event pending
 * and is retried after `retryDelayMs`; after `maxAttempts` it is processed with its error
 * (the poll, where on, stays the safety net).
 */
export function createApplier(deps: {
  store: Store;
  fetches: FetchQueue;
  clock: Clock;
  log: Logger;
  /** Fetch the detail of a request whose v2.0 data failed validation (when polling is on). */
  shouldFetchInvalid: boolean;
  /** What to do with data whose members drifted (default evolve: apply the valid members). */
  schemaPolicy?: SchemaPolicy;
  retryDelayMs?: number;
  maxAttempts?: number;
  /** Events applied per transaction (default APPLY_BATCH for the store's engine). */
  applyBatchSize?: number;
  /** Told each event's outcome (applied, skipped, fetched, failed...), e.g. for metrics. */
  onOutcome?: (outcome: string) => void;
}): EventApplier {
  const { store, fetches, clock, log } = deps;
  const retryDelayMs = deps.retryDelayMs ?? 30_000;
  const maxAttempts = deps.maxAttempts ?? 5;
  const applyBatchSize = deps.applyBatchSize ?? APPLY_BATCH[store.db.engine];
  const readSize = Math.max(BATCH, applyBatchSize);
  const waiting = new Set<string>(); // v1 events whose fetches are running
  const retryAt = new Map<string, number>();
  const handoff = createHandoff(HANDOFF_BYTES);
  let draining: Promise<void> | undefined;
  let isAgain = false;
  let isStopped = false;
  let retryTimer: NodeJS.Timeout | undefined;

  const drain = async () => {
    let after = '';
    for (;;) {
      const { heads, due } = await store.read(async (tx) => {
        const heads = await tx.events.pending(after, readSize);
        const isDue = (row: PendingEvent) =>
          !waiting.has(row.event_id) && (retryAt.get(row.event_id) ?? 0) <= clock.now();
        return { heads, due: await withPayloads(tx.events, heads.filter(isDue)) };
      });
      after = heads.at(-1)?.event_id ?? after;
      const v2: DueEvent[] = [];
      for (const row of due) {
        if (row.envelope === 'v1') await startFetches(row);
        else v2.push(row);
      }
      for (let start = 0; start < v2.length && !isStopped; start += applyBatchSize) {
        await applyBatch(v2.slice(start, start + applyBatchSize));
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (heads.length < readSize || isStopped) return;
    }
  };

  /**
   * The events with their payloads: those handed over at intake as they are, the others read
   * from the table in one statement and parsed.
   */
  const withPayloads = async (
    events: Pick<EventStore, 'payloads'>,
    rows: readonly PendingEvent[],
  ): Promise<DueEvent[]> => {
    const unheld = rows.filter((row) => !handoff.has(row.event_id));
    const texts = await events.payloads(unheld.map((row) => row.event_id));
    return rows.flatMap((row) => {
      if (handoff.has(row.event_id)) return [{ ...row, payload: handoff.take(row.event_id) }];
      const text = texts.get(row.event_id);
      return text === undefined ? [] : [{ ...row, payload: JSON.parse(text) as unknown }];
    });
  };

  const wake = () => {
    if (isStopped) return;
    if (draining) {
      isAgain = true;
      return;
    }
    draining = drain()
      .catch((error: unknown) => log.error({ err: describeError(error) }, 'webhook applier failed'))
      .finally(() => {
        draining = undefined;
        if (isAgain) {
          isAgain = false;
          wake();
        } else scheduleRetry();
      });
  };

  /**
   * Applies events in one transaction. Each is prepared and decided first (prepare-event.ts),
   * against the later events already applied, read in one statement. A run of decisions that
   * touch distinct requests is then written as sets, with their drift and the processed marks, in
   * one savepoint (see isSettable). An event whose request has another event in the batch, or
   * whose decision is a rare one (an unavailable mark, a later mark to keep, an error), goes
   * alone, in a savepoint with its mark, in its place in the order. An event that fails leaves
   * the others applied, and is tried again on its own later; when the engine refuses a run, its
   * events go one at a time, so that only the one at fault fails. Events that lost to a
   * concurrent writer (PostgreSQL) go again at once, on one budget (conflicts.ts).
   */
  const applyBatch = async (rows: DueEvent[], attempt = 1): Promise<void> => {
    const prepared = new Map(
      rows
        .filter((row) => row.envelope === 'v2')
        .map((row) => [row.event_id, prepareV2Event(row.event_id, row.payload, deps)]),
    );
    const timesNamed = new Map<string, number>();
    for (const event of prepared.values())
      if (event.kind === 'valid')
        timesNamed.set(event.base.requestId, (timesNamed.get(event.base.requestId) ?? 0) + 1);
    const applied: { row: DueEvent; result: ApplyResult }[] = [];
    const failed: { row: DueEvent; error: unknown }[] = [];
    try {
      await store.transaction(
        async (tx) => {
          const laters = await tx.events.laterAppliedMany(
            [...prepared.values()].flatMap((p) =>
              p.kind === 'valid' ? [{ requestId: p.base.requestId, eventId: p.eventId }] : [],
            ),
          );
          const alone = async (row: DueEvent) => {
            try {
              const result = await tx.savepoint(async () => {
                const outcome: ApplyResult =
                  row.envelope === 'v2'
                    ? await applyV2Event(tx, row.event_id, row.payload, deps)
                    : { outcome: 'unrecognized', requestId: null, error: 'unrecognized envelope' };
                await tx.events.markProcessed(row.event_id, tx.now(), outcome.error);
                return outcome;
              });
              applied.push({ row, result });
            } catch (error) {
              failed.push({ row, error });
            }
          };
          const inSets = async (run: SettableEvent[]) => {
            if (run.length === 0) return;
            try {
              const results = await tx.savepoint(() => applyInSets(tx, run));
              run.forEach(({ row }, index) => applied.push({ row, result: results[index]! }));
            } catch (error) {
              if (isWriteConflict(error)) {
                for (const { row } of run) failed.push({ row, error });
                return;
              }
              for (const { row } of run) await alone(row);
            }
          };
          let run: SettableEvent[] = [];
          for (const row of rows) {
            const event = prepared.get(row.event_id);
            const decision = event && decideV2Event(event, laters.get(row.event_id), deps);
            if (decision && isSettable(decision, timesNamed)) {
              run.push({ row, decision });
              continue;
            }
            await inSets(run);
            run = [];
            await alone(row);
          }
          await inSets(run);
        },
        { isConflictRetried: false },
      );
    } catch (error) {
      // The commit itself failed: none of them is applied. Lost to a concurrent writer, they
      // go again; otherwise (a full disk, a lost connection) each counts a failed attempt.
      if (isRetriedConflict(error, attempt)) return applyBatch(rows, attempt + 1);
      for (const row of rows) await fail(row, error);
      return;
    }
    for (const { row, result } of applied) reportApplied(row, result);
    // Anything but a conflict counts as a failed attempt, retried after the retry delay.
    const again = failed.filter(({ error }) => isRetriedConflict(error, attempt));
    for (const { row, error } of failed)
      if (!again.some((a) => a.row === row)) await fail(row, error);
    if (again.length > 0)
      await applyBatch(
        again.map(({ row }) => row),
        attempt + 1,
      );
  };

  const reportApplied = (row: PendingEvent, result: ApplyResult) => {
    retryAt.delete(row.event_id);
    const line = {
      eventId: row.event_id,
      action: result.action,
      status: result.status,
      requestId: result.requestId,
      outcome: result.outcome,
    };
    if (result.error) log.warn({ ...line, error: result.error }, 'webhook event not applied');
    else log.info(line, 'webhook event applied');
    deps.onOutcome?.(result.outcome);
    if (result.fetch) void fetches.fetch(result.fetch).catch(() => undefined);
  };

  const startFetches = async (row: DueEvent) => {
    const { ids, eventType, error } = v1RequestIds(row.payload);
    if (error) {
      await store.transaction((tx) => tx.events.markProcessed(row.event_id, tx.now(), error));
      log.warn({ eventId: row.event_id, eventType, error }, 'webhook event not applied');
      return;
    }
    // The event stays in `waiting` until its outcome is written: a drain in between (a wake, or
    // idle()) would otherwise find it pending and fetch again.
    waiting.add(row.event_id);
    fetches.fetch(ids).then(
      async () => {
        retryAt.delete(row.event_id);
        try {
          if (isStopped) return;
          try {
            await store.transaction((tx) => tx.events.markProcessed(row.event_id, tx.now()));
          } catch (error) {
            return await fail(row, error);
          }
          log.info(
            { eventId: row.event_id, eventType, requests: ids.length, outcome: 'fetched' },
            'webhook event applied',
          );
          deps.onOutcome?.('fetched');
        } finally {
          waiting.delete(row.event_id);
        }
      },
      async (fetchError: unknown) => {
        try {
          // Stopping aborts fetches: the event stays pending, unharmed, for the next start.
          if (!isStopped) await fail(row, fetchError);
        } finally {
          waiting.delete(row.event_id);
        }
      },
    );
  };

  const fail = async (row: PendingEvent, error: unknown) => {
    const { code, message } = describeError(error);
    const text = `${code}: ${message}`;
    const isFinal = row.attempts + 1 >= maxAttempts;
    try {
      await store.transaction((tx) =>
        isFinal
          ? tx.events.markProcessed(row.event_id, tx.now(), text)
          : tx.events.markFailed(row.event_id, text),
      );
    } catch (markError) {
      // The database itself is failing: the event stays pending and is retried all the same.
      log.error(
        { eventId: row.event_id, err: describeError(markError) },
        'webhook event not marked',
      );
    }
    if (isFinal) retryAt.delete(row.event_id);
    else retryAt.set(row.event_id, clock.now() + retryDelayMs);
    deps.onOutcome?.(isFinal ? 'failed' : 'retrying');
    log.warn(
      { eventId: row.event_id, attempt: row.attempts + 1, isFinal, err: { code, message } },
      'webhook event failed',
    );
    scheduleRetry();
  };

  const scheduleRetry = () => {
    if (isStopped || retryTimer || retryAt.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      wake();
    }, retryDelayMs);
    retryTimer.unref();
  };

  return {
    wake,
    hold(event) {
      if (!isStopped) handoff.hold(event);
    },
    drop: (eventIds) => handoff.drop(eventIds),
    async idle() {
      // Applying can queue fetches and fetches finish events: loop until both are quiet, with
      // nothing pending but events waiting for their retry time.
      for (;;) {
        if (isStopped) return;
        await draining;
        await fetches.idle();
        if (!draining && waiting.size === 0 && fetches.size === 0) {
          const pending = await store.read((tx) => tx.events.pendingCount());
          if (pending <= retryAt.size) return;
          wake();
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async stop() {
      isStopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await draining;
      handoff.clear();
    },
  };
}
