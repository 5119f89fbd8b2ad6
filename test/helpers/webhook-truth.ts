import { expect } from 'vitest';
import { webhookDataSchema } from '../../src/api/webhook-schemas.js';
import { PROFILE_FLAG_MEMBERS } from '../../src/db/schema/index.js';
import type { Connection } from '../../src/db/sql.js';
import type { Simulator, TruthRecord } from '../../src/simulator/index.js';
import { normalizeDate, normalizeTimestamp } from '../../src/time.js';
import { queryAll, queryOne } from './engine.js';
import { parseJsonColumns } from './webhooks.js';

type Row = Record<string, unknown>;

/** Data members that land in requests or request_locations rather than request_profiles. */
const ROW_MEMBERS = new Set([
  'service_request_id',
  'request_current_state',
  'service_type',
  'service_level_type',
  'organization_id',
  'collection_id',
  'agreed_for_time',
  'pickup_date_time',
  'pickup_location',
  'destination_location',
  'patient_first_name',
  'patient_last_name',
  'patient_date_of_birth',
  'responder_user_first_name',
  'responder_user_last_name',
  'responder_user_email',
  'is_round_trip_first_trip',
  'is_round_trip_return_trip',
]);
const TIME_MEMBERS = new Set(['appointment_datetime', 'return_date_time', 'revised_eta']);
const FLAGS = new Set<string>(PROFILE_FLAG_MEMBERS);

/**
 * The requests columns a webhook-only mirror holds for a truth record, written from the
 * interface's names. The detail serves an absent responder as '' where webhooks send null.
 */
function expectedRow(truth: TruthRecord, data: Record<string, unknown>): Row {
  const detail = truth.detail as Record<string, Record<string, unknown>>;
  // A member the detail leaves out (drift) is still in the webhook's data.
  const d = { ...data, ...(truth.detail as Record<string, unknown>) };
  const user = (name: string) => (detail.user![name] as string) || null;
  return {
    request_id: truth.requestId,
    list_state: truth.listState,
    request_current_state: d.request_current_state,
    patient_first_name: d.patient_first_name,
    patient_last_name: d.patient_last_name ?? data.patient_last_name,
    patient_dob: normalizeDate(d.patient_dob as string),
    transport_pickup_time: normalizeTimestamp(d.transport_pickup_time as string),
    transport_agreed_for_time: d.transport_agreed_for_time
      ? normalizeTimestamp(d.transport_agreed_for_time as string)
      : null,
    service_level_type: d.service_level_type ?? data.service_level_type,
    service_type: d.service_type,
    account_id: detail.account!.id,
    user_first_name: user('first_name'),
    user_last_name: user('last_name'),
    user_email: user('email'),
    is_round_trip_first_trip: d.is_round_trip_first_trip ? 1 : 0,
    is_round_trip_return_trip: d.is_round_trip_return_trip ? 1 : 0,
    collection_id: d.collection_id ?? data.collection_id,
    event_dt_utc: truth.eventDtUtc,
    unavailable_at: null,
    // Webhooks never carry these.
    facility_id: null,
    created_timestamp_utc: null,
    last_updated_timestamp_utc: null,
  };
}

/**
 * The request_profiles row for a data object: each documented member under its own name. A
 * member in its pre-2026-03-01 string form where a boolean is documented is drift: NULL.
 * JSON members (`*_json`) as values: the row's are compared parsed (PostgreSQL reprints jsonb).
 */
function expectedProfile(data: Record<string, unknown>): Row {
  const row: Row = {};
  const documented = new Set(Object.keys(webhookDataSchema.shape));
  for (const [name, value] of Object.entries(data)) {
    if (ROW_MEMBERS.has(name) || !documented.has(name)) continue;
    if (FLAGS.has(name) && typeof value !== 'boolean') {
      row[name] = null;
      continue;
    }
    if (value !== null && typeof value === 'object')
      row[`${name}_json`] = JSON.parse(JSON.stringify(value)) as unknown;
    else if (typeof value === 'boolean') row[name] = value ? 1 : 0;
    else if (TIME_MEMBERS.has(name) && typeof value === 'string')
      row[name] = normalizeTimestamp(value);
    else if (value === null && isJsonMember(name)) row[`${name}_json`] = null;
    else row[name] = value;
  }
  row.request_id = data.service_request_id;
  return row;
}

function isJsonMember(name: string): boolean {
  return /airport$|coverages|therapy|medications|criteria|supervision|hold|under_isolation|equipment|personnel|transport_reason|override_reason|dry_run_reason/.test(
    name,
  );
}

/** Asserts the webhook-only mirror holds the truth for every field webhooks carry. */
export async function expectMirrorEqualsWebhookTruth(h: {
  db: Connection;
  sim: Simulator;
}): Promise<number> {
  const select = (id: string) =>
    queryOne<Row>(h.db, 'SELECT * FROM requests WHERE request_id = @id', { id });
  const locations = (id: string) =>
    queryAll<Row>(
      h.db,
      'SELECT role, location_id, lat, lng, zip, city, name, state, street, address, country FROM request_locations WHERE request_id = @id ORDER BY role',
      { id },
    );
  const profile = async (id: string) =>
    parseJsonColumns(
      await queryOne<Row>(h.db, 'SELECT * FROM request_profiles WHERE request_id = @id', { id }),
    );
  const account = (id: unknown) =>
    queryOne<Row>(h.db, 'SELECT name FROM accounts WHERE account_id = @id', { id });
  let checked = 0;
  for (const truth of h.sim.truth()) {
    const row = await select(truth.requestId);
    if (!truth.isVisible) {
      if (row) expect(row.unavailable_at, truth.requestId).not.toBeNull();
      continue;
    }
    checked += 1;
    expect(row, `request ${truth.requestId} missing`).toBeDefined();
    const data = h.sim.webhooks!.dataOf(truth.requestId)!;
    const expected = expectedRow(truth, data);
    const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, row![key]]));
    expect(actual, truth.requestId).toEqual(expected);
    const detail = truth.detail as Record<string, Record<string, unknown>>;
    const strip = (loc: Record<string, unknown>) => {
      const { id: _id, ...rest } = loc;
      return { location_id: null, ...rest };
    };
    expect(await locations(truth.requestId), truth.requestId).toEqual([
      { role: 'destination', ...strip(detail.destination_location!) },
      { role: 'pickup', ...strip(detail.pickup_location!) },
    ]);
    const expectedMembers = expectedProfile(data);
    const stored = await profile(truth.requestId);
    expect(stored, truth.requestId).toMatchObject(expectedMembers);
    // JSON members compared whole (toMatchObject would accept extra keys inside them).
    const jsonMembers = Object.keys(expectedMembers).filter((key) => key.endsWith('_json'));
    expect(
      Object.fromEntries(jsonMembers.map((key) => [key, stored?.[key]])),
      truth.requestId,
    ).toEqual(Object.fromEntries(jsonMembers.map((key) => [key, expectedMembers[key]])));
    expect(await account(detail.account!.id)).toEqual({ name: detail.account!.name });
  }
  return checked;
}
