import { expect } from 'vitest';
import type { MirrorFixture } from './mirror.js';
import { normalizeDate, normalizeTimestamp } from '../../src/time.js';
import type { TruthRecord } from '../../src/simulator/index.js';

type Row = Record<string, unknown>;

const ts = (value: unknown) => (typeof value === 'string' ? normalizeTimestamp(value) : null);
const bool = (value: unknown) => (value === null || value === undefined ? null : value ? 1 : 0);
const obj = (value: unknown) => (value ?? {}) as Record<string, unknown>;

/**
 * The requests row a perfect mirror holds for a truth record, written out member by member from
 * the interface's field names (independently of the code under test).
 */
export function expectedRow(truth: TruthRecord): Row {
  const detail = truth.detail as Record<string, unknown>;
  const isAwaiting = truth.listState === 'awaiting';
  return {
    request_id: truth.requestId,
    list_state: truth.listState,
    // A member the service left out (schema drift) is stored as NULL.
    request_current_state: detail.request_current_state,
    patient_first_name: detail.patient_first_name ?? null,
    patient_last_name: detail.patient_last_name ?? null,
    patient_dob: typeof detail.patient_dob === 'string' ? normalizeDate(detail.patient_dob) : null,
    transport_pickup_time: ts(detail.transport_pickup_time),
    transport_agreed_for_time: ts(detail.transport_agreed_for_time),
    service_level_type: detail.service_level_type ?? null,
    service_type: detail.service_type ?? null,
    account_id: obj(detail.account).id ?? null,
    facility_id: obj(detail.facility).id ?? null,
    // No responder yet: the service sends empty strings, the mirror stores null.
    user_first_name: obj(detail.user).first_name || null,
    user_last_name: obj(detail.user).last_name || null,
    user_email: obj(detail.user).email || null,
    is_round_trip_first_trip: bool(detail.is_round_trip_first_trip),
    is_round_trip_return_trip: bool(detail.is_round_trip_return_trip),
    collection_id: detail.collection_id ?? null,
    event_dt_utc: truth.eventDtUtc,
    // The full list (awaiting's only source) carries neither; the partial list carries both.
    created_timestamp_utc: isAwaiting ? null : truth.createdTimestampUtc,
    last_updated_timestamp_utc: isAwaiting ? null : truth.lastUpdatedTimestampUtc,
    unavailable_at: null,
  };
}

/** A range of event times, canonical ISO, both ends inclusive. */
export interface EventRange {
  from: string;
  to: string;
}

/** The fixture's poll window now. */
export function pollRange(mirror: MirrorFixture): EventRange {
  const now = mirror.clock.now();
  return {
    from: new Date(now - mirror.deps.settings.windowPastHours * 3_600_000).toISOString(),
    to: new Date(now + mirror.deps.settings.windowFutureHours * 3_600_000).toISOString(),
  };
}

/** Truth records whose event time lies in `range` (default: the poll window now). */
export function truthInWindow(
  mirror: MirrorFixture,
  range: EventRange = pollRange(mirror),
): TruthRecord[] {
  const { from, to } = range;
  return mirror.sim
    .truth()
    .filter((record) => record.eventDtUtc >= from && record.eventDtUtc <= to)
    .filter((record) => mirror.deps.settings.states.includes(record.listState));
}

/** Asserts that the mirror equals the simulator's truth, column by column, child rows included. */
export function expectMirrorEqualsTruth(
  mirror: MirrorFixture,
  range?: EventRange,
  { isVisibleOnly = false }: { isVisibleOnly?: boolean } = {},
): void {
  // A backfill never marks a request unavailable: it is held only to what is still visible.
  const truths = truthInWindow(mirror, range).filter((t) => !isVisibleOnly || t.isVisible);
  const select = mirror.db.sqlite.prepare('SELECT * FROM requests WHERE request_id = ?');
  const locations = mirror.db.sqlite.prepare(
    'SELECT * FROM request_locations WHERE request_id = ? ORDER BY role',
  );
  const fields = mirror.db.sqlite.prepare(
    'SELECT scope, name, value_json FROM request_fields WHERE request_id = ? ORDER BY scope, name',
  );
  let visible = 0;
  for (const truth of truths) {
    const row = select.get(truth.requestId) as Row | undefined;
    if (!truth.isVisible) {
      // Gone from the service: either never stored, or stored and marked, never deleted.
      if (row) expect(row.unavailable_at, truth.requestId).not.toBeNull();
      continue;
    }
    visible += 1;
    expect(row, `request ${truth.requestId} missing`).toBeDefined();
    const expected = expectedRow(truth);
    const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, row![key]]));
    expect(actual, truth.requestId).toEqual(expected);
    // Records read from the full list (awaiting, backfill) carry no location ids: the service
    // omits them there. Every other member must be exactly as the service sent it.
    const raw = JSON.parse(row!.raw_json as string) as Record<string, { id?: unknown }>;
    const isFromFullList = raw.pickup_location?.id === undefined;
    expect(raw, truth.requestId).toEqual(
      isFromFullList ? withoutLocationIds(truth.detail) : truth.detail,
    );
    const detail = truth.detail as Record<string, Record<string, unknown>>;
    const stored = locations.all(truth.requestId) as Row[];
    expect(
      stored.map((location) => [
        location.role,
        location.lat,
        location.lng,
        location.city,
        location.address,
      ]),
      truth.requestId,
    ).toEqual([
      [
        'destination',
        detail.destination_location!.lat,
        detail.destination_location!.lng,
        detail.destination_location!.city,
        detail.destination_location!.address,
      ],
      [
        'pickup',
        detail.pickup_location!.lat,
        detail.pickup_location!.lng,
        detail.pickup_location!.city,
        detail.pickup_location!.address,
      ],
    ]);
    const expectedFields = [
      ...Object.entries(obj(detail.enabled_patient_fields)).map(([name, value]) => ({
        scope: 'patient',
        name,
        value_json: value === null ? null : JSON.stringify(value),
      })),
      ...Object.entries(obj(detail.enabled_request_fields)).map(([name, value]) => ({
        scope: 'request',
        name,
        value_json: value === null ? null : JSON.stringify(value),
      })),
    ].sort((a, b) => (a.scope + a.name < b.scope + b.name ? -1 : 1));
    expect(fields.all(truth.requestId), truth.requestId).toEqual(expectedFields);
  }
  expect(visible).toBeGreaterThan(0);
}

function withoutLocationIds(detail: Record<string, unknown>): Record<string, unknown> {
  const strip = (location: unknown) => {
    if (!location || typeof location !== 'object') return location;
    const { id: _id, ...rest } = location as Record<string, unknown>;
    return rest;
  };
  return {
    ...detail,
    pickup_location: strip(detail.pickup_location),
    destination_location: strip(detail.destination_location),
  };
}
