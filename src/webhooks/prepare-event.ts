import type * as z from 'zod';
import { checkContract, type Drift, type SchemaPolicy } from '../api/contract.js';
import {
  webhookDataContract,
  webhookV2EnvelopeSchema,
  type WebhookData,
} from '../api/webhook-schemas.js';
import type { ProfileRow } from '../db/schema/index.js';
import type { LaterEvent } from '../db/store/event-store.js';
import type { PartialRequestWrite } from '../mirror/observations.js';
import { normalizeWebhookData } from './normalize-webhook.js';

/*
 * What a stored v2.0 event means for the mirror, decided in pure code: the payload (as parsed at
 * intake, or read back from the table) checked once (prepareV2Event), then weighed against the later events already applied to its
 * request (decideV2Event). apply-event.ts writes one decision; the applier writes a run of them
 * as sets.
 */

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

/** The envelope's members that a result reports. */
interface EventBase {
  requestId: string;
  action: string;
  status: string;
}

/** What the data object of an event with a valid envelope is. */
type PreparedBody =
  | { kind: 'none' }
  | { kind: 'refused'; drift: Drift[]; reason: string }
  | { kind: 'mismatch'; drift: Drift[] }
  | {
      kind: 'data';
      drift: Drift[];
      write: Omit<PartialRequestWrite, 'laterUnavailableAt'>;
      profile: ProfileRow;
    };

/** A stored v2.0 event, parsed and checked. */
export type PreparedEvent =
  | { kind: 'invalid'; eventId: string; result: ApplyResult }
  | {
      kind: 'valid';
      eventId: string;
      base: EventBase;
      /** Canonical ISO. */
      eventTimestamp: string;
      isUnavailable: boolean;
      body: PreparedBody;
    };

/** Options of preparing and applying events. */
export interface PrepareOptions {
  /** Fetch the detail of a request whose data failed validation (when polling is on). */
  shouldFetchInvalid: boolean;
  /** What to do with data whose members drifted (default evolve: apply the valid members). */
  schemaPolicy?: SchemaPolicy;
}

/**
 * Checks a v2.0 payload (the parsed JSON, never changed here): the envelope, then the data member
 * by member.
 */
export function prepareV2Event(
  eventId: string,
  payload: unknown,
  { schemaPolicy = 'evolve' }: PrepareOptions,
): PreparedEvent {
  const parsed = webhookV2EnvelopeSchema.safeParse(payload);
  if (!parsed.success) {
    return {
      kind: 'invalid',
      eventId,
      result: {
        outcome: 'invalid',
        requestId: null,
        error: `invalid v2 envelope: ${issues(parsed.error)}`,
      },
    };
  }
  const event = parsed.data;
  const raw = payload as Record<string, unknown>;
  const base = {
    requestId: event.service_request_id,
    action: event.action,
    status: event.request_status,
  };
  const isUnavailable = event.request_status === 'UNAVAILABLE';
  const prepared = { kind: 'valid' as const, eventId, base, isUnavailable };
  const at = event.event_timestamp;
  if (isUnavailable || raw.data === null || raw.data === undefined) {
    return { ...prepared, eventTimestamp: at, body: { kind: 'none' } };
  }
  // Member by member: under evolve one drifted member is stored as NULL and the event still
  // applies; only an event without its identity, or any drift under strict, is not applied.
  const data = checkContract<WebhookData>(webhookDataContract, raw.data, schemaPolicy);
  if (data.kind === 'refused') {
    return {
      ...prepared,
      eventTimestamp: at,
      body: { kind: 'refused', drift: data.drift, reason: data.reason },
    };
  }
  if (data.record.service_request_id !== event.service_request_id) {
    return { ...prepared, eventTimestamp: at, body: { kind: 'mismatch', drift: data.drift } };
  }
  const rows = normalizeWebhookData(data.record, event.request_status);
  const write = {
    ...rows.request,
    // The data object exactly as sent, as requests.raw_json holds whatever record last wrote the
    // row: the stored event's own where the engine can read it there (PostgreSQL).
    rawJson: { eventId, data: raw.data },
    source: 'webhook' as const,
    observedAt: at,
  };
  return {
    ...prepared,
    eventTimestamp: at,
    body: { kind: 'data', drift: data.drift, write, profile: rows.profile },
  };
}

/** What a prepared event does, given the later event already applied to its request. */
export type EventDecision =
  /** Nothing to write but the processed mark. */
  | { kind: 'done'; result: ApplyResult }
  /** Mark the request unavailable at `at`. */
  | { kind: 'unavailable'; base: EventBase; at: string }
  /** Record the drift, then store nothing more. */
  | { kind: 'refused'; drift: Drift[]; result: ApplyResult }
  /**
   * Store the data, then the profile; under a later "unavailable" (`later`), keep or set its
   * mark. The outcome is the write's.
   */
  | {
      kind: 'write';
      base: EventBase;
      drift: Drift[];
      write: PartialRequestWrite;
      profile: ProfileRow;
      eventTimestamp: string;
      later: LaterEvent | undefined;
    };

/**
 * Decides a prepared event. Order: an event older (by event_id) than one already applied to the
 * request is skipped when that later event holds data, or when both mark the request unavailable;
 * the store's guard then skips data older (by event_timestamp) than the row's last observation.
 */
export function decideV2Event(
  prepared: PreparedEvent,
  later: LaterEvent | undefined,
  { shouldFetchInvalid }: PrepareOptions,
): EventDecision {
  if (prepared.kind === 'invalid') return { kind: 'done', result: prepared.result };
  const { base, body } = prepared;
  const refused = (drift: Drift[], error: string, more: Partial<ApplyResult> = {}) => ({
    kind: 'refused' as const,
    drift,
    result: { ...base, outcome: 'invalid', error, ...more },
  });
  // A later event already applied: with data, it holds newer data than this one; marking the
  // request unavailable, it supersedes an "unavailable" but not data it has not seen.
  if (later && (later.hasData || prepared.isUnavailable))
    return { kind: 'done', result: { ...base, outcome: 'superseded', error: null } };
  // Data is null by definition; the row and its data stay, only the mark is set.
  if (prepared.isUnavailable) return { kind: 'unavailable', base, at: prepared.eventTimestamp };
  switch (body.kind) {
    case 'none':
      return { kind: 'done', result: { ...base, outcome: 'no_data', error: null } };
    case 'refused':
      return refused(body.drift, `invalid data: ${body.reason}`, {
        drift: body.drift.length,
        ...(shouldFetchInvalid ? { fetch: [base.requestId] } : {}),
      });
    case 'mismatch':
      return refused(body.drift, 'data.service_request_id differs from the envelope');
    case 'data':
      return {
        kind: 'write',
        base,
        drift: body.drift,
        write: { ...body.write, ...(later && { laterUnavailableAt: later.eventTimestamp }) },
        profile: body.profile,
        eventTimestamp: prepared.eventTimestamp,
        later,
      };
  }
}

/** Paths and messages of the first issues; never values, which may be patient data. */
export function issues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
}
