import type { ServiceActions } from '../api/index.js';
import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../log.js';
import type { SyncClient } from '../sync/ports.js';
import { isoFromMs } from '../time.js';
import { backoffMs, classifyFailure, failureText, OUTCOME_UNKNOWN } from './failures.js';

/** The service client as the drainer uses it: the actions, and the detail for reading back. */
export type OutboxClient = ServiceActions & SyncClient;

/** What one request's queue drain needs. */
export interface QueueDeps {
  store: Store;
  client: OutboxClient;
  clock: Clock;
  log: Logger;
  /** True once a graceful stop was asked for: finish the row in hand, start no other. */
  isStopping: () => boolean;
}

/** What draining one request's queue did. */
export interface QueueResult {
  sent: number;
  /** Location calls made (one per batch). */
  calls: number;
  failed: number;
  /** Rows left pending after a transient failure, to be retried after their backoff. */
  deferred: number;
  /** The failure concerned the service as a whole: the pass should stop. */
  isServiceDown: boolean;
}

/** A zero result. */
export function emptyResult(): QueueResult {
  return { sent: 0, calls: 0, failed: 0, deferred: 0, isServiceDown: false };
}

/** Adds `more` into `into`. */
export function addResult(into: QueueResult, more: QueueResult): void {
  into.sent += more.sent;
  into.calls += more.calls;
  into.failed += more.failed;
  into.deferred += more.deferred;
  into.isServiceDown ||= more.isServiceDown;
}

/** Note appended to a final failure when an earlier send's outcome was never learned. */
export const EARLIER_SEND_NOTE =
  ' (an earlier send of this row had an unknown outcome: it may have taken effect)';

/**
 * Records a failed send of `ids`; returns true when the request's queue must stop. Permanent: the
 * rows fail for good. Transient: they stay pending until their backoff ends, and the queue stops
 * there, because the rows behind them must not overtake them. An abort by the caller is not the
 * service's answer: the rows stay due at once, their outcome unknown.
 */
export async function recordFailure(
  deps: QueueDeps,
  sent: { table: 'locations' | 'actions'; ids: number[]; attempts: number; wasUncertain: boolean },
  error: unknown,
  signal: AbortSignal | undefined,
  result: QueueResult,
): Promise<boolean> {
  const { store, clock } = deps;
  const now = isoFromMs(clock.now());
  if (signal?.aborted) {
    await store.transaction((tx) =>
      tx.outbox[sent.table].markRetry(sent.ids, `${OUTCOME_UNKNOWN}interrupted`, now),
    );
    result.deferred += sent.ids.length;
    return true;
  }
  const failure = classifyFailure(error);
  const text = failureText(error);
  if (failure.kind === 'permanent') {
    const reason = sent.wasUncertain ? `${text}${EARLIER_SEND_NOTE}` : text;
    await store.transaction((tx) => tx.outbox[sent.table].markFailed(sent.ids, reason));
    result.failed += sent.ids.length;
    deps.log.warn(
      { table: sent.table, outboxIds: sent.ids.slice(0, 5), rows: sent.ids.length, reason },
      'outbox rows failed',
    );
    return false;
  }
  const isUncertain = sent.wasUncertain || failure.isOutcomeUnknown;
  const retryAt = isoFromMs(clock.now() + backoffMs(sent.attempts));
  await store.transaction((tx) =>
    tx.outbox[sent.table].markRetry(
      sent.ids,
      `${isUncertain ? OUTCOME_UNKNOWN : ''}${text}`,
      retryAt,
    ),
  );
  result.deferred += sent.ids.length;
  result.isServiceDown ||= failure.isServiceDown;
  deps.log.warn(
    {
      table: sent.table,
      outboxIds: sent.ids.slice(0, 5),
      rows: sent.ids.length,
      retryAt,
      error: text,
    },
    'outbox send failed, will retry',
  );
  return true;
}
