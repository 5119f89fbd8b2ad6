import { afterEach, describe, expect, it } from 'vitest';
import { webhookDataSchema } from '../../../src/api/webhook-schemas.js';
import { PROFILE_FLAG_MEMBERS } from '../../../src/db/schema/index.js';
import type { TruthRecord } from '../../../src/simulator/index.js';
import { normalizeDate, normalizeTimestamp } from '../../../src/time.js';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhooks.js';

let hook: WebhookFixture;
afterEach(async () => hook?.close());

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
    if (value !== null && typeof value === 'object') row[`${name}_json`] = JSON.stringify(value);
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
function expectMirrorEqualsWebhookTruth(h: WebhookFixture): number {
  const select = h.db.sqlite.prepare('SELECT * FROM requests WHERE request_id = ?');
  const locations = h.db.sqlite.prepare(
    'SELECT role, location_id, lat, lng, zip, city, name, state, street, address, country FROM request_locations WHERE request_id = ? ORDER BY role',
  );
  const profile = h.db.sqlite.prepare('SELECT * FROM request_profiles WHERE request_id = ?');
  const account = h.db.sqlite.prepare('SELECT name FROM accounts WHERE account_id = ?');
  let checked = 0;
  for (const truth of h.sim.truth()) {
    const row = select.get(truth.requestId) as Row | undefined;
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
    expect(locations.all(truth.requestId), truth.requestId).toEqual([
      { role: 'destination', ...strip(detail.destination_location!) },
      { role: 'pickup', ...strip(detail.pickup_location!) },
    ]);
    expect(profile.get(truth.requestId), truth.requestId).toMatchObject(expectedProfile(data));
    expect(account.get(detail.account!.id)).toEqual({ name: detail.account!.name });
  }
  return checked;
}

describe('webhooks from the simulator', () => {
  it.each([
    ['', 0.1],
    [', every request in drifted forms (pre-2026-03-01 strings, unknown members)', 1],
  ])(
    'alone (no polling) converge to the truth for every field webhooks carry, through duplicates and reordering%s',
    async (_title, driftRate) => {
      hook = await startWebhookFixture({
        requests: 0,
        roughness: { driftRate },
        webhooks: {
          url: 'http://127.0.0.1:9/',
          retryDelaysMs: [0, 20, 100],
          duplicateRate: 0.3,
          reorder: true,
        },
      });
      const sender = hook.sim.webhooks!;
      hook.sim.addRequests(25);
      hook.sim.addRequests(10, { state: 'accepted' });
      hook.sim.addRequests(4, { roundTrip: true });
      for (let round = 0; round < 8; round += 1) {
        hook.clock.advance(60_000);
        hook.sim.mutate(15);
        await sender.idle();
        await hook.service.idle();
      }
      // The provider's own actions through the API: accept, decline, best time, change request.
      const awaiting = hook.sim.truth().filter((t) => t.isVisible && t.listState === 'awaiting');
      await hook.client.accept(awaiting[0]!.requestId);
      await hook.client.decline(awaiting[1]!.requestId);
      hook.clock.advance(60_000);
      hook.sim.mutate(20);
      await sender.idle();
      await hook.service.idle();

      expect(sender.stats.lost).toBe(0);
      expect(sender.stats.duplicates).toBeGreaterThan(0);
      expect(
        hook.count(
          'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL OR error IS NOT NULL',
        ),
      ).toBe(0);
      expect(hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(sender.stats.events);
      expect(expectMirrorEqualsWebhookTruth(hook)).toBeGreaterThan(30);
      expect(
        hook.count('SELECT count(*) AS n FROM requests WHERE unavailable_at IS NOT NULL'),
      ).toBeGreaterThan(0);
      const reads = ['detail', 'list', 'details_list'];
      expect(hook.sim.calls.filter((call) => reads.includes(call.endpoint))).toHaveLength(0);
      if (driftRate === 1) {
        // Every event applied all the same; each retyped member recorded, by type name only.
        const retyped = hook.db.sqlite
          .prepare(
            "SELECT DISTINCT member FROM schema_drift WHERE source = 'webhook' AND problem = 'type' AND expected = 'boolean' AND received = 'string'",
          )
          .all() as { member: string }[];
        expect(retyped.length).toBeGreaterThanOrEqual(10);
        expect(
          hook.count("SELECT count(*) AS n FROM schema_drift WHERE problem = 'unknown'"),
        ).toBeGreaterThan(0);
      }
    },
  );

  it('as v1.0 cues alone, converge through detail fetches (one per request per burst of cues)', async () => {
    hook = await startWebhookFixture({
      requests: 0,
      webhooks: { url: 'http://127.0.0.1:9/', retryDelaysMs: [0, 20, 100], envelope: 'v1' },
    });
    const sender = hook.sim.webhooks!;
    hook.sim.addRequests(15);
    hook.sim.addRequests(10, { state: 'accepted' });
    for (let round = 0; round < 4; round += 1) {
      hook.clock.advance(60_000);
      hook.sim.mutate(10);
      await sender.idle();
      await hook.service.idle();
    }
    sender.sendV1('collection.state.updated', {
      collection_id: 'C1',
      collection_current_state: 'accepted',
      request_ids: hook.sim.truth().map((t) => t.requestId),
    });
    await sender.idle();
    await hook.service.idle();
    const select = hook.db.sqlite.prepare(
      'SELECT request_current_state, transport_agreed_for_time, patient_last_name, unavailable_at, source FROM requests WHERE request_id = ?',
    );
    for (const truth of hook.sim.truth()) {
      const row = select.get(truth.requestId) as Row | undefined;
      const detail = truth.detail as Row;
      if (!truth.isVisible) {
        if (row) expect(row.unavailable_at, truth.requestId).not.toBeNull();
        continue;
      }
      expect(row, truth.requestId).toEqual({
        request_current_state: detail.request_current_state,
        transport_agreed_for_time: detail.transport_agreed_for_time
          ? normalizeTimestamp(detail.transport_agreed_for_time as string)
          : null,
        patient_last_name: detail.patient_last_name,
        unavailable_at: null,
        source: 'webhook',
      });
    }
    expect(
      hook.count(
        "SELECT count(*) AS n FROM webhook_events WHERE envelope = 'v1' AND processed_at IS NOT NULL AND error IS NULL",
      ),
    ).toBe(sender.stats.events);
  });

  it('retries a delivery the receiver missed, on the scaled schedule', async () => {
    hook = await startWebhookFixture({
      requests: 0,
      webhooks: { url: 'http://127.0.0.1:9/', retryDelaysMs: [0, 150, 300] },
    });
    const sender = hook.sim.webhooks!;
    const url = sender.url;
    sender.url = 'http://127.0.0.1:9/webhooks/'; // nothing listens: the first attempt fails
    hook.sim.addRequests(1);
    setTimeout(() => (sender.url = url), 50);
    await sender.idle();
    await hook.service.idle();
    expect(sender.stats).toMatchObject({ events: 1, delivered: 1, lost: 0 });
    expect(sender.stats.attempts).toBeGreaterThanOrEqual(2);
    expect(hook.count('SELECT count(*) AS n FROM requests')).toBe(1);
  });
});
