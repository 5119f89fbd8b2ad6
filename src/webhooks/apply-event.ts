import { webhookV1EnvelopeSchema } from '../api/webhook-schemas.js';
import type { StoreTx } from '../db/store.js';
import {
  decideV2Event,
  issues,
  prepareV2Event,
  type ApplyResult,
  type EventDecision,
  type PrepareOptions,
} from './prepare-event.js';

export type { ApplyResult } from './prepare-event.js';

/**
 * Applies one v2.0 event from its payload (parsed JSON), inside the caller's transaction: prepared
 * and decided as prepare-event.ts says, against the later event already applied to its request.
 */
export async function applyV2Event(
  tx: StoreTx,
  eventId: string,
  payload: unknown,
  options: PrepareOptions,
): Promise<ApplyResult> {
  const prepared = prepareV2Event(eventId, payload, options);
  const later =
    prepared.kind === 'valid'
      ? await tx.events.laterApplied(prepared.base.requestId, eventId)
      : undefined;
  return applyDecision(tx, eventId, decideV2Event(prepared, later, options));
}

/** Writes one event's decision (see EventDecision) inside the caller's transaction. */
export async function applyDecision(
  tx: StoreTx,
  eventId: string,
  decision: EventDecision,
): Promise<ApplyResult> {
  switch (decision.kind) {
    case 'done':
      return decision.result;
    case 'unavailable': {
      const isMarked = await tx.requests.markUnavailable(
        decision.base.requestId,
        decision.at,
        'webhook',
        { isGuarded: true },
      );
      return { ...decision.base, outcome: isMarked ? 'unavailable' : 'unchanged', error: null };
    }
    case 'refused':
      if (decision.drift.length > 0) {
        await tx.drift.record(decision.result.requestId!, 'webhook', decision.drift, tx.now());
      }
      return decision.result;
    case 'write': {
      const { base, drift, later } = decision;
      if (drift.length > 0) await tx.drift.record(base.requestId, 'webhook', drift, tx.now());
      const outcome = await tx.requests.writePartial(decision.write);
      // Members only webhooks carry: no poll can be newer, so only a later event can overwrite them.
      await tx.events.writeProfile(decision.profile, eventId, decision.eventTimestamp);
      // Delivered after the later "unavailable" that was applied first: the data is stored and
      // the request stays unavailable (writePartial keeps a mark the row has), as when the two
      // arrive in order. A mark that found no row is set now, with its change-log row.
      if (later) {
        await tx.requests.markUnavailable(base.requestId, later.eventTimestamp, 'webhook', {
          isGuarded: true,
        });
      }
      return { ...base, outcome, error: null, drift: drift.length };
    }
  }
}

/** The requests a v1.0 event (its parsed payload) is a cue for: one request, or a collection's. */
export function v1RequestIds(payload: unknown): {
  ids: string[];
  eventType?: string;
  error: string | null;
} {
  const parsed = webhookV1EnvelopeSchema.safeParse(payload);
  if (!parsed.success) return { ids: [], error: `invalid v1 envelope: ${issues(parsed.error)}` };
  const { event, event_type: eventType } = parsed.data;
  const ids = [...(event.request_ids ?? []), ...(event.request_id ? [event.request_id] : [])];
  const unique = [...new Set(ids.filter((id) => id !== ''))];
  if (unique.length === 0) return { ids: [], eventType, error: 'v1 event names no request' };
  return { ids: unique, eventType, error: null };
}
