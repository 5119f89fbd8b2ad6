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

/**
 * Asserts that the mirror equals the simulator's truth, column by column, child rows included.
 * Reads the whole mirror in one snapshot, on either engine.
 */
export async function expectMirrorEqualsTruth(
  mirror: MirrorFixture,
  range?: EventRange,
  { isVisibleOnly = false }: { isVisibleOnly?: boolean } = {},
): Promise<void> {
  // A backfill never marks a request unavailable: it is held only to what is still visible.
  const truths = truthInWindow(mirror, range).filter((t) => !isVisibleOnly || t.isVisible);
  const { requests, locations, fields } = await mirror.db.read(
    async (sql) => ({
      requests: byRequest(await sql.all<Row>('SELECT * FROM requests')),
      locations: byRequest(
        await sql.all<Row>('SELECT * FROM request_locations ORDER BY request_id, role'),
      ),
      fields: byRequest(
        await sql.all<Row>(
          'SELECT request_id, scope, name, value_json FROM request_fields ORDER BY request_id, scope, name',
        ),
      ),
    }),
    { isSnapshot: true },
  );
  let visible = 0;
  for (const truth of truths) {
    const row = requests.get(truth.requestId)?.[0];
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
    const stored = locations.get(truth.requestId) ?? [];
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
        value: value ?? null,
      })),
      ...Object.entries(obj(detail.enabled_request_fields)).map(([name, value]) => ({
        scope: 'request',
        name,
        value: value ?? null,
      })),
    ].sort(byScopeAndName);
    // JSON compared as values: PostgreSQL's jsonb prints it its own way.
    const storedFields = (fields.get(truth.requestId) ?? []).map(({ scope, name, value_json }) => ({
      scope,
      name,
      value: value_json === null ? null : JSON.parse(value_json as string),
    }));
    // Sorted here, not by SQL: PostgreSQL's collation may order names differently from SQLite's.
    storedFields.sort(byScopeAndName);
    expect(storedFields, truth.requestId).toEqual(expectedFields);
  }
  expect(visible).toBeGreaterThan(0);
}

function byScopeAndName(
  a: { scope: unknown; name: unknown },
  b: { scope: unknown; name: unknown },
) {
  const [x, y] = [
    `${String(a.scope)}\u0000${String(a.name)}`,
    `${String(b.scope)}\u0000${String(b.name)}`,
  ];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Rows grouped by their request_id, in the order read. */
function byRequest(rows: Row[]): Map<string, Row[]> {
  const grouped = new Map<string, Row[]>();
  for (const row of rows) {
    const id = row.request_id as string;
    grouped.set(id, [...(grouped.get(id) ?? []), row]);
  }
  return grouped;
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
