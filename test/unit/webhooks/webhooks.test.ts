import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookDataSchema, webhookV2EventSchema } from '../../../src/api/webhook-schemas.js';
import { PROFILE_COLUMNS } from '../../../src/db/schema/index.js';
import {
  createSimulator,
  statusAndAction,
  type MutationSummary,
} from '../../../src/simulator/index.js';
import { parseListen } from '../../../src/webhooks/index.js';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import { listStateOf, normalizeWebhookData } from '../../../src/webhooks/normalize-webhook.js';
import { createVerifier } from '../../../src/webhooks/signature.js';
import { v2Event, webhookData } from '../../helpers/webhooks.js';

const AT = '2026-11-21T10:00:00.000Z';
const row = (payload: Record<string, unknown>) =>
  toEventRow(payload, Buffer.from(JSON.stringify(payload)), AT);

describe('envelope columns', () => {
  it('classifies v2.0, v1.0 and unknown shapes, and takes the columns leniently', () => {
    expect(row(v2Event('evt_1', { event_timestamp: '2026-11-21T11:00:00+01:00' }))).toMatchObject({
      event_id: 'evt_1',
      envelope: 'v2',
      event_timestamp: '2026-11-21T10:00:00.000Z',
      service_request_id: 'XX-ABCD1234',
      request_status: 'ASSIGNED',
      action: 'BROADCAST_ACCEPTED',
      event_type: null,
      received_at: AT,
    });
    expect(
      row({
        event_id: 42,
        event_type: 'request.status.available',
        event: { request_id: 'K3J9QX2A' },
      }),
    ).toMatchObject({
      event_id: '42',
      envelope: 'v1',
      service_request_id: 'K3J9QX2A',
      event_type: 'request.status.available',
    });
    const unknown = row({ something: 'else' });
    expect(unknown.envelope).toBe('unknown');
    expect(unknown.event_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Same bytes, same id: a retried copy is still a duplicate.
    expect(row({ something: 'else' }).event_id).toBe(unknown.event_id);
    expect(row(v2Event('evt_2', { event_timestamp: 'yesterday', action: 7 }))).toMatchObject({
      event_timestamp: null,
      action: null,
    });
  });

  it('keeps the body exactly as received', () => {
    const body = Buffer.from('{"event_id":"e1",  "action":"X","extra":{"b":1,"a":2}}');
    expect(toEventRow(JSON.parse(body.toString()), body, AT).payload_json).toBe(body.toString());
  });
});

describe('signature verification', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const check = createVerifier(publicKey);
  const body = Buffer.from('{"event_id":"evt_1"}');
  const good = sign('sha256', body, privateKey).toString('base64');

  it('accepts the signature of the exact bytes, with surrounding white space', () => {
    expect(check(body, good)).toBe(true);
    expect(check(body, ` ${good}\n`)).toBe(true);
  });

  it('refuses a missing, empty, malformed, truncated or foreign signature, and changed bytes', () => {
    expect(check(body, undefined)).toBe(false);
    expect(check(body, '')).toBe(false);
    expect(check(body, 'not base64!')).toBe(false);
    expect(check(body, good.slice(0, 40))).toBe(false);
    expect(check(body, sign('sha256', body, other.privateKey).toString('base64'))).toBe(false);
    expect(check(Buffer.from('{"event_id": "evt_1"}'), good)).toBe(false);
  });
});

describe('the v2.0 data object as rows', () => {
  it('maps the members the requests table shares, and leaves the rest to request_profiles', () => {
    const data = webhookDataSchema.parse(webhookData());
    const { request, profile } = normalizeWebhookData(data, 'ASSIGNED');
    expect(request.content).toMatchObject({
      request_id: 'XX-ABCD1234',
      list_state: 'accepted',
      patient_dob: '1948-02-29',
      transport_pickup_time: '2026-11-22T14:00:00.000Z',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
      event_dt_utc: '2026-11-22T14:30:00.000Z',
      account_id: 'ORG1',
      user_last_name: 'API',
      is_round_trip_first_trip: 0,
    });
    expect(request.unknownColumns).toEqual([
      'facility_id',
      'created_timestamp_utc',
      'last_updated_timestamp_utc',
    ]);
    expect(request.account).toEqual({
      account_id: 'ORG1',
      name: "St. Brigid's Regional Medical Center",
    });
    expect(
      request.locations.map((location) => [location.role, location.location_id, location.city]),
    ).toEqual([
      ['pickup', null, 'Columbus'],
      ['destination', null, 'Dublin'],
    ]);
    expect(profile).toMatchObject({
      appointment_datetime: '2026-11-22T15:30:00.000Z',
      pickup_is_home: 0,
      patient_age: 78,
      medications_json: '[{"name":"Heparin","dose":"1000 u/hr"}]',
      departure_airport_json: null,
    });
  });

  it('keeps the stored event time when the data has neither time', () => {
    const data = webhookDataSchema.parse(
      webhookData({ agreed_for_time: null, pickup_date_time: null }),
    );
    expect(normalizeWebhookData(data, 'AVAILABLE').request.unknownColumns).toContain(
      'event_dt_utc',
    );
  });

  it('maps statuses to list states, falling back to the data state for undocumented ones', () => {
    expect(listStateOf('AVAILABLE', 'awaiting')).toBe('awaiting');
    expect(listStateOf('ASSIGNED', 'awaiting')).toBe('accepted');
    expect(listStateOf('COMPLETED', null)).toBe('completed');
    expect(listStateOf('CANCELED', 'canceled')).toBe('canceled');
    expect(listStateOf('ON_HOLD', 'en_route')).toBeNull();
  });

  it('gives every documented member a home: a requests column or a request_profiles column of its name', () => {
    const shared = [
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
    ];
    const members = Object.keys(webhookDataSchema.shape);
    const homes = members
      .filter((name) => !shared.includes(name))
      .map((name) => (PROFILE_COLUMNS.includes(name) ? name : `${name}_json`));
    expect(homes.every((column) => PROFILE_COLUMNS.includes(column))).toBe(true);
    expect([...PROFILE_COLUMNS].sort()).toEqual(['request_id', ...homes].sort());
  });
});

describe('listen addresses', () => {
  it('takes host:port, [v6]:port or a bare port on 127.0.0.1', () => {
    expect(parseListen('8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseListen('0.0.0.0:9000')).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(parseListen('[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(() => parseListen('host:99999')).toThrow(/host:port/);
    expect(() => parseListen(undefined)).toThrow(/not set/);
  });
});

describe('the simulator as a webhook source', () => {
  const summary = (overrides: Partial<MutationSummary>): MutationSummary => ({
    kind: 'edited',
    requestId: 'A',
    at: AT,
    lastUpdated: AT,
    state: 'accepted',
    isVisible: true,
    origin: 'service',
    ...overrides,
  });

  it('names the documented action and status of each mutation', () => {
    expect(statusAndAction(summary({ kind: 'created', state: 'awaiting' }))).toEqual({
      status: 'AVAILABLE',
      action: 'BROADCAST_RECEIVED',
    });
    expect(statusAndAction(summary({ kind: 'accepted' }))).toEqual({
      status: 'ASSIGNED',
      action: 'BROADCAST_ACCEPTED',
    });
    expect(statusAndAction(summary({ kind: 'completed', state: 'completed' }))).toEqual({
      status: 'COMPLETED',
      action: 'REQUEST_COMPLETED',
    });
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'declined' })),
    ).toEqual({ status: 'UNAVAILABLE', action: 'BROADCAST_DECLINED' });
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'expired' })).action,
    ).toBe('BROADCAST_EXPIRED');
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'canceled' }))
        .action,
    ).toBe('BROADCAST_CANCELED');
    expect(statusAndAction(summary({ kind: 'proposal_accepted' })).action).toBe(
      'PROPOSAL_ACCEPTED',
    );
    expect(statusAndAction(summary({ kind: 'change_request_declined' })).action).toBe(
      'CHANGE_REQUEST_DECLINED',
    );
  });

  it('sends data objects with every documented member, valid, realistic and stable per request', () => {
    // The documented shape: the simulator's drifted forms are tested in simulator-roughness.
    const sim = createSimulator({
      seed: 3,
      requests: 150,
      webhooks: { url: 'http://127.0.0.1:9/' },
      roughness: { driftRate: 0 },
    });
    const members = Object.keys(webhookDataSchema.shape);
    const nullCounts = new Map<string, number>();
    const truths = sim.truth();
    for (const truth of truths) {
      const data = sim.webhooks!.dataOf(truth.requestId)!;
      expect(Object.keys(data)).toEqual(members);
      expect(webhookDataSchema.safeParse(data).success, truth.requestId).toBe(true);
      expect(sim.webhooks!.dataOf(truth.requestId)).toEqual(data);
      expect(data.patient_last_name).toBe(
        (truth.detail as Record<string, unknown>).patient_last_name,
      );
      for (const member of members)
        if (data[member] === null) nullCounts.set(member, (nullCounts.get(member) ?? 0) + 1);
    }
    // Required members are never null; optional ones are null sometimes, but not always.
    expect(nullCounts.get('requester_email')).toBeUndefined();
    expect(nullCounts.get('patient_id')! / truths.length).toBeLessThan(0.3);
    expect(nullCounts.get('contact_name')! / truths.length).toBeGreaterThan(0.2);
    const event = {
      event_id: 'e',
      event_timestamp: AT,
      service_request_id: truths[0]!.requestId,
      request_status: 'ASSIGNED',
      action: 'X',
      data: sim.webhooks!.dataOf(truths[0]!.requestId),
    };
    expect(webhookV2EventSchema.safeParse(event).success).toBe(true);
    sim.webhooks!.close();
  });
});
