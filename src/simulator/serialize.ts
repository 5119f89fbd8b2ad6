/**
 * Turns internal records into what the wire carries: the detail record, the partial list item and
 * the truth record. One place, so the detail endpoint, the full list and `truth()` cannot drift.
 */
import { normalizeTimestamp } from '../time.js';
import { driftDetail, type DriftProfile } from './drift.js';
import type {
  JsonValue,
  SimAccount,
  SimLocation,
  SimRequest,
  TimestampStyle,
  TruthRecord,
} from './model.js';

/** Drops what a style cannot carry (milliseconds for the whole-second styles). */
export function quantize(ms: number, style: TimestampStyle): number {
  return style === 'millis' ? Math.floor(ms) : Math.floor(ms / 1000) * 1000;
}

/** The smallest step that changes a timestamp written in `style`. */
export function stepMs(style: TimestampStyle): number {
  return style === 'millis' ? 1 : 1000;
}

/** `ms` written the way `style` writes it: `...:00Z`, `...:00.000Z` or `...:00+00:00`. */
export function formatTimestamp(ms: number, style: TimestampStyle): string {
  const iso = new Date(quantize(ms, style)).toISOString();
  if (style === 'millis') return iso;
  const seconds = iso.slice(0, 19);
  return style === 'offset' ? `${seconds}+00:00` : `${seconds}Z`;
}

/**
 * Event time: the agreed time, else the requested pickup time (the service falls back to the
 * creation time last, but the simulator always has a requested time, as the spec types it).
 */
export function eventMs(request: SimRequest): number {
  return request.agreedMs ?? request.pickupMs;
}

function location(loc: SimLocation, includeId: boolean): Record<string, JsonValue> {
  const { id, ...rest } = loc;
  return includeId ? { id, ...rest } : { ...rest };
}

/** Options for serializing a detail record. */
export interface DetailOptions {
  /** Locations carry `id` in the detail response and not in the full list. */
  includeLocationIds: boolean;
  /** `exclude_facilities=true`: account.facilities becomes null. */
  excludeFacilities: boolean;
  /** The request's drift when it applies (World.driftOf); none when absent. */
  drift?: DriftProfile | null;
}

/** The detail record of `request`, as a fresh plain object in the spec's member order. */
export function toDetail(
  request: SimRequest,
  account: SimAccount,
  options: DetailOptions,
): Record<string, JsonValue> {
  const ts = (ms: number | null) => (ms === null ? null : formatTimestamp(ms, request.style));
  const detail: Record<string, JsonValue> = {
    request_id: request.id,
    patient_first_name: request.patient.firstName,
    patient_last_name: request.patient.lastName,
    patient_dob: request.patient.dob,
    pickup_location: location(request.pickup, options.includeLocationIds),
    destination_location: location(request.destination, options.includeLocationIds),
    transport_pickup_time: ts(request.pickupMs),
    transport_agreed_for_time: ts(request.agreedMs),
    service_level_type: request.serviceLevel,
    service_type: request.serviceType,
    account: {
      id: account.id,
      name: account.name,
      service_levels: [...account.serviceLevels],
      facilities: options.excludeFacilities
        ? null
        : account.facilities.map((f) => ({ id: f.id, name: f.name, address: f.address })),
    },
    facility: { ...request.facility },
    // Before acceptance there is no responder; the spec types the members as strings, so they
    // are served empty rather than null to keep spec-typed clients working.
    user: request.user ? { ...request.user } : { first_name: '', last_name: '', email: '' },
    enabled_patient_fields: structuredClone(request.patientFields),
    enabled_request_fields: structuredClone(request.requestFields),
    request_current_state: request.state,
    is_round_trip_first_trip: request.isRoundTripFirst,
    is_round_trip_return_trip: request.isRoundTripReturn,
    collection_id: request.collectionId,
  };
  return driftDetail(detail, options.drift ?? null);
}

/** The partial list item of `request`. */
export function toListItem(request: SimRequest): Record<string, JsonValue> {
  return {
    id: request.id,
    state: request.state,
    created_timestamp_utc: formatTimestamp(request.createdMs, request.style),
    event_dt_utc: formatTimestamp(eventMs(request), request.style),
    last_updated_timestamp_utc: formatTimestamp(request.lastUpdatedMs, request.style),
  };
}

function canonical(ms: number, style: TimestampStyle): string {
  // Through the project's own normalizer, so truth and a correct client agree by construction.
  return normalizeTimestamp(formatTimestamp(ms, style)) ?? new Date(ms).toISOString();
}

/** What a perfect mirror should hold for `request`, drifting as the detail endpoint serves it. */
export function toTruth(
  request: SimRequest,
  account: SimAccount,
  drift: DriftProfile | null,
): TruthRecord {
  return {
    requestId: request.id,
    listState: request.state,
    detail: toDetail(request, account, {
      includeLocationIds: true,
      excludeFacilities: false,
      drift,
    }),
    createdTimestampUtc: canonical(request.createdMs, request.style),
    eventDtUtc: canonical(eventMs(request), request.style),
    lastUpdatedTimestampUtc: canonical(request.lastUpdatedMs, request.style),
    isVisible: request.isVisible,
  };
}
