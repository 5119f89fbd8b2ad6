import type { StoreTx } from '../db/store.js';
import type { PendingEvent } from '../db/store/event-store.js';
import type { ApplyResult, EventDecision } from './prepare-event.js';

/** A pending event with its payload (parsed JSON). */
export type DueEvent = PendingEvent & { payload: unknown };

/**
 * An event whose decision a set write can carry: nothing but its mark (without an error), or
 * plain data.
 */
export interface SettableEvent {
  row: DueEvent;
  decision: Extract<EventDecision, { kind: 'done' | 'write' }>;
}

/**
 * Whether a set write can carry a decision: nothing but the processed mark (without an error),
 * or data (its drift recorded beside it, no later mark to keep) about a request no other event
 * of the batch names (`timesNamed`: how many of the batch's events name each request).
 */
export function isSettable(
  decision: EventDecision,
  timesNamed: ReadonlyMap<string, number>,
): decision is SettableEvent['decision'] {
  if (decision.kind === 'done') return decision.result.error === null;
  return (
    decision.kind === 'write' &&
    decision.later === undefined &&
    timesNamed.get(decision.base.requestId) === 1
  );
}

/**
 * Writes a run of decided events, each of a request no other event of the run names, as sets:
 * the drift of those that have some (in the run's order, as one by one), the data
 * (requests.writePartialMany), then the profiles, then every processed mark. The results come
 * back in the run's order. The caller holds the run in a savepoint.
 */
export async function applyInSets(
  tx: StoreTx,
  run: readonly SettableEvent[],
): Promise<ApplyResult[]> {
  const writes = run.flatMap(({ row, decision }) =>
    decision.kind === 'write' ? [{ eventId: row.event_id, decision }] : [],
  );
  // Events with drift come often (the service's records drift): were they applied alone, each
  // would cut the run and cost a savepoint and some twenty statements.
  const at = tx.now();
  await tx.drift.recordMany(
    writes.map(({ decision }) => ({
      requestId: decision.base.requestId,
      source: 'webhook',
      drift: decision.drift,
      at,
    })),
  );
  const outcomes = await tx.requests.writePartialMany(writes.map((w) => w.decision.write));
  // Members only webhooks carry: no poll can be newer, so only a later event can overwrite them.
  await tx.events.writeProfiles(
    writes.map(({ eventId, decision }) => ({
      profile: decision.profile,
      eventId,
      updatedAt: decision.eventTimestamp,
    })),
  );
  await tx.events.markProcessedMany(
    run.map(({ row }) => row.event_id),
    tx.now(),
  );
  const outcomeOf = new Map(writes.map((w, index) => [w.eventId, outcomes[index]!]));
  return run.map(({ row, decision }) =>
    decision.kind === 'done'
      ? decision.result
      : {
          ...decision.base,
          outcome: outcomeOf.get(row.event_id)!,
          error: null,
          drift: decision.drift.length,
        },
  );
}
