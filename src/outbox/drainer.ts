import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import { drainActionQueue } from './drain-actions.js';
import { drainLocationQueue } from './drain-locations.js';
import { addResult, emptyResult, type OutboxClient, type QueueDeps } from './queue.js';

/** What one drain pass did. */
export interface DrainSummary {
  actionsSent: number;
  locationsSent: number;
  /** Location calls made (one per batch of at most 200). */
  locationCalls: number;
  /** Rows marked failed for good: invalid, or refused by the service. */
  failed: number;
  /** Rows left pending after a transient failure, retried after their backoff. */
  deferred: number;
  /** The pass stopped early because the service could not be reached (or refused our token). */
  isServiceDown: boolean;
}

/** What the drainer needs. */
export interface OutboxDeps {
  store: Store;
  client: OutboxClient;
  log: Logger;
  clock: Clock;
}

/** One pass over both outbox tables; rows that fail transiently wait for their backoff. */
export async function drainOutbox(
  deps: OutboxDeps & Partial<Pick<QueueDeps, 'isStopping'>>,
  signal?: AbortSignal,
): Promise<DrainSummary> {
  const queue: QueueDeps = { isStopping: () => false, ...deps };
  const isDone = () => signal?.aborted || queue.isStopping();
  const now = isoFromMs(deps.clock.now());
  // Actions first: an accept races the broadcast's expiry, a GPS sample races nothing. Both
  // lists from one snapshot: an action and samples another program queued in one transaction
  // leave in that order, even when it commits between the two reads.
  const due = await deps.store.read(
    async (tx) => ({
      actions: await tx.outbox.actions.dueRequests(now),
      locations: await tx.outbox.locations.dueRequests(now),
    }),
    { isSnapshot: true },
  );
  const actions = emptyResult();
  for (const requestId of due.actions) {
    if (isDone() || actions.isServiceDown) break;
    addResult(actions, await drainActionQueue(queue, requestId, signal));
  }
  const locations = emptyResult();
  if (!actions.isServiceDown) {
    for (const requestId of due.locations) {
      if (isDone() || locations.isServiceDown) break;
      addResult(locations, await drainLocationQueue(queue, requestId, signal));
    }
  }
  return {
    actionsSent: actions.sent,
    locationsSent: locations.sent,
    locationCalls: locations.calls,
    failed: actions.failed + locations.failed,
    deferred: actions.deferred + locations.deferred,
    isServiceDown: actions.isServiceDown || locations.isServiceDown,
  };
}

/** A running drainer. */
export interface OutboxDrainer {
  /** One pass now (after the running one, never beside it); `signal` aborts calls in flight. */
  drainOnce(signal?: AbortSignal): Promise<DrainSummary>;
  /** Stops the loop: the running pass ends after the row or batch in hand; resolves after it. */
  stop(): Promise<void>;
}

/**
 * Starts draining the outbox at once and then `intervalMs` after each pass ends, so passes never
 * overlap. Stopping does not abort a call in flight: an aborted accept is an accept whose outcome
 * is unknown, which costs a read-back later; letting it finish costs at most one call's time.
 */
export function startOutboxDrainer({
  store,
  client,
  log,
  clock,
  intervalMs,
}: OutboxDeps & { intervalMs: number }): OutboxDrainer {
  const areaLog = log.child({ area: 'outbox' });
  let isStopping = false;
  let running: Promise<DrainSummary> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wasServiceDown = false;

  async function drainOnce(signal?: AbortSignal): Promise<DrainSummary> {
    while (running) await running.catch(() => undefined);
    const deps = { store, client, clock, log: areaLog, isStopping: () => isStopping };
    running = drainOutbox(deps, signal).finally(() => (running = undefined));
    return running;
  }

  async function tick(): Promise<void> {
    try {
      const summary = await drainOnce();
      const { actionsSent, locationsSent, failed, deferred } = summary;
      if (actionsSent + locationsSent + failed + deferred > 0) {
        areaLog.info({ actionsSent, locationsSent, failed, deferred }, 'outbox drained');
      }
      // Said once per outage, not once per pass.
      if (summary.isServiceDown && !wasServiceDown) {
        areaLog.warn('outbox: service unreachable, rows wait');
        wasServiceDown = true;
      } else if (wasServiceDown && !summary.isServiceDown && actionsSent + locationsSent > 0) {
        areaLog.info('outbox: service reachable again');
        wasServiceDown = false;
      }
    } catch (error) {
      areaLog.error({ err: describeError(error) }, 'outbox drain failed');
    }
    if (!isStopping) timer = setTimeout(() => void tick(), intervalMs);
  }

  timer = setTimeout(() => void tick(), 0);
  return {
    drainOnce,
    async stop() {
      isStopping = true;
      clearTimeout(timer);
      while (running) await running.catch(() => undefined);
    },
  };
}
