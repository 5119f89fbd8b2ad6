import { describeError } from '../errors.js';
import { refreshRequest } from '../sync/refresh.js';
import { isoFromMs } from '../time.js';
import { inFlightText, isUncertain } from './failures.js';
import type { OutboxActionRow } from '../db/store/outbox-store.js';
import { emptyResult, recordFailure, type QueueDeps, type QueueResult } from './queue.js';
import { judge, observeRequest } from './readback.js';
import { sendAction } from './send.js';
import { checkAction, type OutboxAction } from './validation.js';

/**
 * Sends one request's pending actions in the order inserted (outbox_id), one at a time. An invalid
 * row fails at once and the next one goes; a transient failure stops this request's queue until
 * the row's backoff ends; a permanent one fails the row and the next one goes.
 */
export async function drainActionQueue(
  deps: QueueDeps,
  requestId: string,
  signal?: AbortSignal,
): Promise<QueueResult> {
  const { store, clock } = deps;
  const result = emptyResult();
  const now = () => isoFromMs(clock.now());
  while (!signal?.aborted && !deps.isStopping()) {
    const row = await store.read((tx) => tx.outbox.actions.next(requestId));
    if (!row) break;
    const checked = checkAction(inputOf(row), clock.now());
    if (!checked.ok) {
      await store.transaction((tx) =>
        tx.outbox.actions.markFailed([row.outbox_id], `invalid row: ${checked.reason}`),
      );
      result.failed += 1;
      deps.log.warn({ outboxId: row.outbox_id, reason: checked.reason }, 'invalid outbox action');
      continue;
    }
    const action = checked.value;
    const wasUncertain = isUncertain(row.last_error);
    const sent = {
      table: 'actions' as const,
      ids: [row.outbox_id],
      attempts: row.attempts,
      wasUncertain,
    };
    try {
      if (wasUncertain && (action.kind === 'accept' || action.kind === 'decline')) {
        // A repeat would answer 403 although the first took effect: ask the service instead.
        const verdict = judge(action.kind, await observeRequest(deps, requestId, signal));
        if (verdict.outcome === 'sent') {
          await store.transaction((tx) =>
            tx.outbox.actions.markSent([row.outbox_id], now(), verdict.note),
          );
          result.sent += 1;
          continue;
        }
        if (verdict.outcome === 'failed') {
          await store.transaction((tx) =>
            tx.outbox.actions.markFailed([row.outbox_id], verdict.reason),
          );
          result.failed += 1;
          continue;
        }
      }
      await store.transaction((tx) =>
        tx.outbox.actions.claim([row.outbox_id], inFlightText(now())),
      );
      sent.attempts += 1;
      await sendAction(deps.client, requestId, action, signal);
    } catch (error) {
      if (await recordFailure(deps, sent, error, signal, result)) break;
      continue;
    }
    // Stored first, right after the 2xx: everything after this may fail without a repeat.
    await store.transaction((tx) => tx.outbox.actions.markSent([row.outbox_id], now()));
    result.sent += 1;
    await refreshAfter(deps, requestId, action, signal);
  }
  return result;
}

function inputOf(row: OutboxActionRow) {
  return {
    kind: row.kind,
    notes: row.notes,
    stateName: row.state_name,
    at: row.at,
    reason: row.reason,
  };
}

/** After an accept or decline the mirror row is refreshed at once; a failure waits for the poll. */
async function refreshAfter(
  deps: QueueDeps,
  requestId: string,
  action: OutboxAction,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (action.kind !== 'accept' && action.kind !== 'decline') return;
  try {
    await refreshRequest(deps, requestId, { source: 'action', signal });
  } catch (error) {
    deps.log.warn({ requestId, err: describeError(error) }, 'mirror refresh after action failed');
  }
}
