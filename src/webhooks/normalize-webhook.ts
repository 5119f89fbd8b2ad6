import type { WebhookData, WebhookLocation } from '../api/webhook-schemas.js';
import {
  PROFILE_FLAG_MEMBERS,
  PROFILE_JSON_MEMBERS,
  PROFILE_NUMBER_MEMBERS,
  PROFILE_TEXT_MEMBERS,
  PROFILE_TIME_MEMBERS,
  PROFILE_COLUMNS,
  rowMaker,
  type LocationRow,
  type ProfileRow,
  type RequestContent,
} from '../db/schema/index.js';
import type { PartialRequestWrite } from '../mirror/observations.js';
import { locationRow } from '../sync/normalize.js';

/*
 * v2.0 webhook data object -> rows. Pure, like sync/normalize.ts. Timestamps and dates arrive
 * canonical from the zod schema (timestampSchema, dateSchema), so they compare with polled ones.
 */

/** What one data object becomes. */
export interface WebhookRows {
  request: Omit<PartialRequestWrite, 'rawJson' | 'source' | 'observedAt'>;
  profile: ProfileRow;
}

/** The documented request_status values and the list state each means. */
const LIST_STATE_BY_STATUS: Readonly<Record<string, string>> = {
  AVAILABLE: 'awaiting',
  ASSIGNED: 'accepted',
  COMPLETED: 'completed',
};
const LIST_STATES = new Set(['awaiting', 'accepted', 'completed', 'canceled']);

/**
 * requests columns a webhook never carries: facility_id (webhooks name the facility, never its
 * id), and the list's created and last_updated times. The stored values stay.
 */
const NEVER_CARRIED = [
  'facility_id',
  'created_timestamp_utc',
  'last_updated_timestamp_utc',
] as const satisfies readonly (keyof RequestContent)[];

/**
 * The list state a status means. An undocumented status falls back to the data's
 * request_current_state when that is a list state (a cancellation says "canceled"), else null:
 * unknown, so the stored list state stays.
 */
export function listStateOf(
  status: string,
  currentState: string | null | undefined,
): string | null {
  const mapped = LIST_STATE_BY_STATUS[status];
  if (mapped) return mapped;
  return currentState && LIST_STATES.has(currentState) ? currentState : null;
}

/**
 * Maps a checked data object, delivered with `status`, onto requests and request_profiles. A
 * member the contract found drifted arrives as null and is stored as NULL.
 */
export function normalizeWebhookData(data: WebhookData, status: string): WebhookRows {
  const id = data.service_request_id;
  const agreed = data.agreed_for_time ?? null;
  const pickup = data.pickup_date_time ?? null;
  const eventDt = agreed ?? pickup;
  const content: RequestContent = {
    request_id: id,
    list_state: listStateOf(status, data.request_current_state),
    request_current_state: data.request_current_state,
    patient_first_name: data.patient_first_name ?? null,
    patient_last_name: data.patient_last_name ?? null,
    patient_dob: data.patient_date_of_birth ?? null,
    transport_pickup_time: pickup,
    transport_agreed_for_time: agreed,
    service_level_type: data.service_level_type ?? null,
    service_type: data.service_type ?? null,
    account_id: data.organization_id ?? null,
    facility_id: null,
    user_first_name: data.responder_user_first_name ?? null,
    user_last_name: data.responder_user_last_name ?? null,
    user_email: data.responder_user_email ?? null,
    is_round_trip_first_trip: flag(data.is_round_trip_first_trip),
    is_round_trip_return_trip: flag(data.is_round_trip_return_trip),
    collection_id: data.collection_id ?? null,
    created_timestamp_utc: null,
    event_dt_utc: eventDt,
    last_updated_timestamp_utc: null,
  };
  return {
    request: {
      content,
      // Neither time known: the stored event time (possibly the created time) is still the best.
      unknownColumns: eventDt ? NEVER_CARRIED : [...NEVER_CARRIED, 'event_dt_utc'],
      locations: [
        // Webhook locations carry no id; the store decides whether a stored id still applies.
        locationRow(id, 'pickup', withoutId(data.pickup_location)),
        locationRow(id, 'destination', withoutId(data.destination_location)),
      ].filter((row): row is LocationRow => row !== null),
      account: data.organization_id
        ? { account_id: data.organization_id, name: data.account_name ?? null }
        : null,
    },
    profile: profileRow(data),
  };
}

const newProfileRow = rowMaker<ProfileRow>(PROFILE_COLUMNS);

/** The request_profiles columns of a data object, named as its members (`_json` for arrays). */
export function profileRow(data: WebhookData): ProfileRow {
  const member = data as Record<string, unknown>;
  const row = newProfileRow();
  row.request_id = data.service_request_id;
  for (const name of PROFILE_TEXT_MEMBERS) row[name] = textOf(member[name]);
  for (const name of PROFILE_TIME_MEMBERS) row[name] = textOf(member[name]);
  for (const name of PROFILE_FLAG_MEMBERS) row[name] = flag(member[name]);
  for (const name of PROFILE_NUMBER_MEMBERS) {
    const value = member[name];
    row[name] = typeof value === 'number' ? value : null;
  }
  for (const name of PROFILE_JSON_MEMBERS) {
    const value = member[name];
    row[`${name}_json`] = value === null || value === undefined ? null : JSON.stringify(value);
  }
  return row;
}

function flag(value: unknown): number | null {
  return typeof value === 'boolean' ? (value ? 1 : 0) : null;
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function withoutId(location: WebhookLocation | null | undefined) {
  return location ? { ...location, id: null } : location;
}
