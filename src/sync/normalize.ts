import { createHash } from 'node:crypto';
import type { AccountRow, FieldRow, LocationRow, RequestContent } from '../db/schema/index.js';
import type { NormalizedRequest } from '../mirror/observations.js';
import { stableStringify } from '../json.js';
import { normalizeDate, normalizeTimestamp } from '../time.js';

export { stableStringify };

/*
 * API record -> table rows. Pure: no clock, no database. Every timestamp passes through
 * normalizeTimestamp here and nowhere else, so the store compares like with like.
 */

type Nullable<T> = T | null | undefined;

/** The members of a location object the mirror stores. */
export interface LocationLike {
  id?: Nullable<string>;
  lat?: Nullable<number>;
  lng?: Nullable<number>;
  zip?: Nullable<string>;
  city?: Nullable<string>;
  name?: Nullable<string>;
  state?: Nullable<string>;
  street?: Nullable<string>;
  address?: Nullable<string>;
  country?: Nullable<string>;
}

/** The members of a request detail record the mirror stores (the rest stays in raw_json). */
export interface DetailLike {
  request_id: string;
  patient_first_name?: Nullable<string>;
  patient_last_name?: Nullable<string>;
  patient_dob?: Nullable<string>;
  pickup_location?: Nullable<LocationLike>;
  destination_location?: Nullable<LocationLike>;
  transport_pickup_time?: Nullable<string>;
  transport_agreed_for_time?: Nullable<string>;
  service_level_type?: Nullable<string>;
  service_type?: Nullable<string>;
  account?: Nullable<{
    id?: Nullable<string>;
    name?: Nullable<string>;
    service_levels?: Nullable<unknown[]>;
    facilities?: Nullable<unknown[]>;
  }>;
  facility?: Nullable<{ id?: Nullable<string>; name?: Nullable<string> }>;
  user?: Nullable<{
    first_name?: Nullable<string>;
    last_name?: Nullable<string>;
    email?: Nullable<string>;
  }>;
  enabled_patient_fields?: Nullable<Record<string, unknown>>;
  enabled_request_fields?: Nullable<Record<string, unknown>>;
  request_current_state?: Nullable<string>;
  is_round_trip_first_trip?: Nullable<boolean>;
  is_round_trip_return_trip?: Nullable<boolean>;
  collection_id?: Nullable<string>;
}

/**
 * What a list says of a request beside its record: the partial list gives all four, the full
 * list only the state it was asked for.
 */
export interface ListFields {
  state?: string;
  created_timestamp_utc?: string;
  event_dt_utc?: string;
  last_updated_timestamp_utc?: string;
}

/** Request states that are also list states. */
const LIST_STATES = new Set(['awaiting', 'accepted', 'completed', 'canceled']);

/**
 * Normalizes a detail record (from the detail endpoint or the full list) with what a list said
 * of it. Unknown list fields are null (the store keeps what it had), and the event time is then
 * derived as the service derives it: agreed, else requested pickup, else created.
 */
export function normalizeDetail(detail: DetailLike, list?: ListFields): NormalizedRequest {
  const id = detail.request_id;
  const agreed = timestamp(detail.transport_agreed_for_time);
  const pickup = timestamp(detail.transport_pickup_time);
  const created = timestamp(list?.created_timestamp_utc);
  const currentState = detail.request_current_state ?? null;
  const content: RequestContent = {
    request_id: id,
    list_state:
      list?.state ?? (currentState && LIST_STATES.has(currentState) ? currentState : null),
    request_current_state: currentState,
    patient_first_name: detail.patient_first_name ?? null,
    patient_last_name: detail.patient_last_name ?? null,
    patient_dob: detail.patient_dob ? normalizeDate(detail.patient_dob) : null,
    transport_pickup_time: pickup,
    transport_agreed_for_time: agreed,
    service_level_type: detail.service_level_type ?? null,
    service_type: detail.service_type ?? null,
    account_id: detail.account?.id ?? null,
    facility_id: detail.facility?.id ?? null,
    // Before acceptance the detail names no responder with empty strings, webhooks with null:
    // one form, so the two paths do not flip the row back and forth.
    user_first_name: detail.user?.first_name || null,
    user_last_name: detail.user?.last_name || null,
    user_email: detail.user?.email || null,
    is_round_trip_first_trip: bool(detail.is_round_trip_first_trip),
    is_round_trip_return_trip: bool(detail.is_round_trip_return_trip),
    collection_id: detail.collection_id ?? null,
    created_timestamp_utc: created,
    event_dt_utc: timestamp(list?.event_dt_utc) ?? agreed ?? pickup ?? created,
    last_updated_timestamp_utc: timestamp(list?.last_updated_timestamp_utc),
  };
  return {
    content,
    locations: [
      locationRow(id, 'pickup', detail.pickup_location),
      locationRow(id, 'destination', detail.destination_location),
    ].filter((row): row is LocationRow => row !== null),
    fields: [
      ...fieldRows(id, 'patient', detail.enabled_patient_fields),
      ...fieldRows(id, 'request', detail.enabled_request_fields),
    ],
    account: accountRow(detail.account),
    facility: detail.facility?.id
      ? {
          facility_id: detail.facility.id,
          name: detail.facility.name ?? null,
          account_id: detail.account?.id ?? null,
        }
      : null,
    contentHash: contentHash(detail),
  };
}

/**
 * A hash of the record's content that ignores location ids: the detail endpoint sends them and
 * the full list does not, and that difference alone is not a change.
 */
export function contentHash(detail: DetailLike): string {
  const withoutLocationIds = {
    ...detail,
    pickup_location: withoutId(detail.pickup_location),
    destination_location: withoutId(detail.destination_location),
  };
  return createHash('sha1').update(stableStringify(withoutLocationIds)).digest('base64url');
}

function withoutId(location: Nullable<LocationLike>): Nullable<LocationLike> {
  if (!location) return location;
  const { id: _id, ...rest } = location;
  return rest;
}

function timestamp(value: Nullable<string>): string | null {
  return value ? normalizeTimestamp(value) : null;
}

function bool(value: Nullable<boolean>): number | null {
  return value === null || value === undefined ? null : value ? 1 : 0;
}

/** A request_locations row from a location object (members absent or null become null). */
export function locationRow(
  requestId: string,
  role: LocationRow['role'],
  location: Nullable<LocationLike>,
): LocationRow | null {
  if (!location) return null;
  return {
    request_id: requestId,
    role,
    location_id: location.id ?? null,
    lat: location.lat ?? null,
    lng: location.lng ?? null,
    zip: location.zip ?? null,
    city: location.city ?? null,
    name: location.name ?? null,
    state: location.state ?? null,
    street: location.street ?? null,
    address: location.address ?? null,
    country: location.country ?? null,
  };
}

function fieldRows(
  requestId: string,
  scope: FieldRow['scope'],
  fields: Nullable<Record<string, unknown>>,
): FieldRow[] {
  if (!fields) return [];
  return Object.entries(fields).map(([name, value]) => ({
    request_id: requestId,
    scope,
    name,
    value_json: value === null || value === undefined ? null : JSON.stringify(value),
  }));
}

function accountRow(account: DetailLike['account']): AccountRow | null {
  if (!account?.id) return null;
  return {
    account_id: account.id,
    name: account.name ?? null,
    service_levels_json: account.service_levels ? JSON.stringify(account.service_levels) : null,
    facilities_json: account.facilities ? JSON.stringify(account.facilities) : null,
  };
}

/** Just the list fields of a partial-list item (its id aside). */
export function listFieldsOf(item: Required<ListFields>): ListFields {
  const { state, created_timestamp_utc, event_dt_utc, last_updated_timestamp_utc } = item;
  return { state, created_timestamp_utc, event_dt_utc, last_updated_timestamp_utc };
}
