import type { z } from 'zod';
import { checkContract, type SchemaPolicy } from '../api/contract.js';
import {
  webhookDataContract,
  webhookV1EnvelopeSchema,
  webhookV2EnvelopeSchema,
  type WebhookData,
} from '../api/webhook-schemas.js';
import type { StoreTx } from '../db/store.js';
import { normalizeWebhookData } from './normalize-webhook.js';

/** What applying one stored event did; `fetch` lists requests whose detail should be fetched. */
export interface ApplyResult {
  outcome: string;
  requestId: string | null;
  action?: string;
  status?: string;
  /** Set when the event cannot be applied as sent; it is then processed with this error. */
  error: string | null;
  fetch?: string[];
  /** Members of the data object that drifted from the documented shape. */
  drift?: number;
}

/**
 * Applies one v2.0 event from its stored payload, inside the caller's transaction. Order: an
 * event older (by event_id) than one already applied to the request is skipped; then the
 * store's guard skips an event older (by event_timestamp) than the row's last observation.
 */
export async function applyV2Event(
  tx: StoreTx,
  eventId: string,
  payloadJson: string,
  {
    shouldFetchInvalid,
    schemaPolicy = 'evolve',
  }: { shouldFetchInvalid: boolean; schemaPolicy?: SchemaPolicy },
): Promise<ApplyResult> {
  const raw = JSON.parse(payloadJson) as Record<string, unknown>;
  const parsed = webhookV2EnvelopeSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      outcome: 'invalid',
      requestId: null,
      error: `invalid v2 envelope: ${issues(parsed.error)}`,
    };
  }
  const event = parsed.data;
  const base = {
    requestId: event.service_request_id,
    action: event.action,
    status: event.request_status,
  };
  // A later event already applied: with data, it holds newer data than this one; marking the
  // request unavailable, it supersedes an "unavailable" but not data it has not seen (below).
  const later = await tx.events.laterApplied(event.service_request_id, eventId);
  const isUnavailable = event.request_status === 'UNAVAILABLE';
  if (later && (later.hasData || isUnavailable))
    return { ...base, outcome: 'superseded', error: null };

  if (isUnavailable) {
    // Data is null by definition; the row and its data stay, only the mark is set.
    const isMarked = await tx.requests.markUnavailable(
      event.service_request_id,
      event.event_timestamp,
      'webhook',
      { isGuarded: true },
    );
    return { ...base, outcome: isMarked ? 'unavailable' : 'unchanged', error: null };
  }
  if (raw.data === null || raw.data === undefined)
    return { ...base, outcome: 'no_data', error: null };

  // Member by member: under evolve one drifted member is stored as NULL and the event still
  // applies; only an event without its identity, or any drift under strict, is not applied.
  const data = checkContract<WebhookData>(webhookDataContract, raw.data, schemaPolicy);
  if (data.drift.length > 0) {
    await tx.drift.record(event.service_request_id, 'webhook', data.drift, tx.now());
  }
  if (data.kind === 'refused') {
    return {
      ...base,
      outcome: 'invalid',
      error: `invalid data: ${data.reason}`,
      drift: data.drift.length,
      ...(shouldFetchInvalid ? { fetch: [event.service_request_id] } : {}),
    };
  }
  if (data.record.service_request_id !== event.service_request_id) {
    return {
      ...base,
      outcome: 'invalid',
      error: 'data.service_request_id differs from the envelope',
    };
  }
  const rows = normalizeWebhookData(data.record, event.request_status);
  const outcome = await tx.requests.writePartial({
    ...rows.request,
    // The data object exactly as sent, as requests.raw_json holds whatever record last wrote the row.
    rawJson: JSON.stringify(raw.data),
    source: 'webhook',
    observedAt: event.event_timestamp,
    ...(later && { laterUnavailableAt: later.eventTimestamp }),
  });
  // Members only webhooks carry: no poll can be newer, so only a later event can overwrite them.
  await tx.events.writeProfile(rows.profile, eventId, event.event_timestamp);
  // Delivered after the later "unavailable" that was applied first: the data is stored and the
  // request stays unavailable (writePartial keeps a mark the row has), as when the two arrive in
  // order. A mark that found no row is set now, with its change-log row.
  if (later) {
    await tx.requests.markUnavailable(event.service_request_id, later.eventTimestamp, 'webhook', {
      isGuarded: true,
    });
  }
  return { ...base, outcome, error: null, drift: data.drift.length };
}

/** The requests a v1.0 event is a cue for: one request, or all of a collection's. */
export function v1RequestIds(payloadJson: string): {
  ids: string[];
  eventType?: string;
  error: string | null;
} {
  const parsed = webhookV1EnvelopeSchema.safeParse(JSON.parse(payloadJson));
  if (!parsed.success) return { ids: [], error: `invalid v1 envelope: ${issues(parsed.error)}` };
  const { event, event_type: eventType } = parsed.data;
  const ids = [...(event.request_ids ?? []), ...(event.request_id ? [event.request_id] : [])];
  const unique = [...new Set(ids.filter((id) => id !== ''))];
  if (unique.length === 0) return { ids: [], eventType, error: 'v1 event names no request' };
  return { ids: unique, eventType, error: null };
}

/** Paths and messages of the first issues; never values, which may be patient data. */
function issues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
