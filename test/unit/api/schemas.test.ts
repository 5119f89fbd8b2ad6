import { describe, expect, it } from 'vitest';
import {
  parseRecord,
  parseRecords,
  requestDetailSchema,
  requestListItemSchema,
  webhookDataSchema,
  webhookV1EnvelopeSchema,
  webhookV2EnvelopeSchema,
  webhookV2EventSchema,
} from '../../../src/api/index.js';
import { base, detailRecord, listItem, makeClient, mockToken, useNock } from '../../helpers/api.js';

useNock();

describe('per-record validation of lists', () => {
  it('rejects a malformed element, keeps the others and their unknown members', async () => {
    mockToken();
    base()
      .get('/svc/openapi/v1.0/requests/')
      .query(true)
      .reply(200, [
        listItem('A1', { priority_hint: 'new-member' }),
        listItem('B2', { last_updated_timestamp_utc: 'last tuesday' }),
        { state: 'accepted' },
        'not an object',
        listItem('C3'),
      ]);
    const { client } = makeClient();
    const { items, rejected } = await client.listRequests({ from: 0, to: 1, state: 'accepted' });
    expect(items.map((i) => i.id)).toEqual(['A1', 'C3']);
    expect(items[0]?.priority_hint).toBe('new-member');
    expect(rejected.map((r) => r.requestId)).toEqual(['B2', null, null]);
    expect(rejected[0]?.reason).toBe(
      'request B2: last_updated_timestamp_utc: expected an ISO-8601 timestamp',
    );
    expect(rejected[0]?.reason).not.toContain('last tuesday');
    expect(rejected[1]?.reason).toMatch(/^request \(no id\): id: missing, expected string/);
    expect(rejected[0]?.raw).toMatchObject({ id: 'B2' });
  });

  it('names the request and member path, never the value (it may be patient data)', () => {
    const bad = detailRecord('K3J9QX2A', { patient_dob: 'Ada-1950' });
    const result = parseRecord(requestDetailSchema, bad, ['request_id']);
    expect(result.kind).toBe('rejected');
    if (result.kind === 'rejected') {
      expect(result.rejected.reason).toBe(
        'request K3J9QX2A: patient_dob: expected a YYYY-MM-DD date',
      );
      expect(result.rejected.requestId).toBe('K3J9QX2A');
    }
    const nested = parseRecord(
      requestDetailSchema,
      detailRecord('K3J9QX2A', { pickup_location: { lat: 'forty', name: 'Secret Street 5' } }),
      ['request_id'],
    );
    expect(nested.kind === 'rejected' && nested.rejected.reason).toBe(
      'request K3J9QX2A: pickup_location.lat: expected number',
    );
    expect(JSON.stringify(nested.kind === 'rejected' && nested.rejected.reason)).not.toContain(
      'Secret',
    );
  });

  it('a detail page keeps raws aligned with items', () => {
    const raws = [
      detailRecord('A1'),
      detailRecord('B2', { request_current_state: 42 }),
      detailRecord('C3'),
    ];
    const parsed = parseRecords(requestDetailSchema, raws, ['request_id']);
    expect(parsed.items.map((i) => i.request_id)).toEqual(['A1', 'C3']);
    expect(parsed.raws).toEqual([raws[0], raws[2]]);
    expect(parsed.rejected[0]?.reason).toBe('request B2: request_current_state: expected string');
  });

  it('getRequest reports a rejected detail under the asked-for id', async () => {
    mockToken();
    base()
      .get('/svc/openapi/v1.0/requests/K3J9QX2A/')
      .reply(200, { ...detailRecord('x'), request_id: undefined, is_round_trip_first_trip: 'yes' });
    const { client } = makeClient();
    const result = await client.getRequest('K3J9QX2A');
    expect(result.kind).toBe('rejected');
    if (result.kind === 'rejected') {
      expect(result.rejected.requestId).toBe('K3J9QX2A');
      expect(result.rejected.reason).toBe('request K3J9QX2A: request_id: missing');
    }
  });

  it('getRequest keeps a record with a retyped member under evolve, and refuses it under strict', async () => {
    mockToken();
    const scope = base()
      .get('/svc/openapi/v1.0/requests/K3J9QX2A/')
      .times(2)
      .reply(200, { ...detailRecord('K3J9QX2A'), is_round_trip_first_trip: 'yes' });
    const evolve = await makeClient().client.getRequest('K3J9QX2A');
    expect(evolve.kind).toBe('ok');
    if (evolve.kind === 'ok') {
      expect(evolve.record.is_round_trip_first_trip).toBeNull();
      expect(evolve.drift).toEqual([
        {
          member: 'is_round_trip_first_trip',
          problem: 'type',
          expected: 'boolean',
          received: 'string',
        },
      ]);
    }
    mockToken();
    const strict = await makeClient({ schemaPolicy: 'strict' }).client.getRequest('K3J9QX2A');
    expect(strict.kind === 'rejected' && strict.rejected.reason).toBe(
      'request K3J9QX2A: is_round_trip_first_trip: expected boolean, got string',
    );
    expect(scope.isDone()).toBe(true);
  });
});

describe('request schemas', () => {
  it('accepts timestamps in mixed forms and normalizes them to one', () => {
    const forms = [
      '2022-04-28T14:00:00Z',
      '2022-04-28T14:00:00.000Z',
      '2022-04-28T16:00:00+02:00',
      '2022-04-28 14:00:00',
      '2022-04-28T14:00:00.000000Z',
    ];
    for (const form of forms) {
      const parsed = requestListItemSchema.parse(
        listItem('A', { last_updated_timestamp_utc: form }),
      );
      expect(parsed.last_updated_timestamp_utc).toBe('2022-04-28T14:00:00.000Z');
    }
  });

  it('accepts null and absent for nullable members, and Location objects without id', () => {
    const record = detailRecord('A1', {
      transport_agreed_for_time: null,
      patient_dob: null,
      user: null,
      enabled_patient_fields: null,
      account: { id: 'a', name: 'b', service_levels: ['BLS'], facilities: null },
      pickup_location: { lat: 1, lng: 2 },
      destination_location: { address: null, lat: null },
    });
    delete (record as Record<string, unknown>).collection_id;
    expect(requestDetailSchema.safeParse(record).success).toBe(true);
  });

  it('keeps unknown members at every level', () => {
    const parsed = requestDetailSchema.parse(
      detailRecord('A1', {
        extra_top: 1,
        pickup_location: { lat: 1, lng: 2, geohash: 'dr5r' },
        enabled_request_fields: { custom_field_7: { nested: true } },
      }),
    );
    expect(parsed.extra_top).toBe(1);
    expect(parsed.pickup_location?.geohash).toBe('dr5r');
    expect(parsed.enabled_request_fields).toEqual({ custom_field_7: { nested: true } });
  });
});

describe('webhook schemas', () => {
  const data = () => ({
    service_request_id: 'XX-ABCD1234',
    request_current_state: 'accepted',
    change_request_enabled: true,
    service_type: 'Ambulance',
    service_level_type: null,
    scheduling_option: 'specific',
    scheduling_type: 'one_way',
    organization_id: 'org-1',
    account_name: 'General',
    facility_name: null,
    collection_id: null,
    service_request_web_url: 'https://app.example/r/XX-ABCD1234',
    agreed_for_time: null,
    pickup_date_time: '2026-01-28T21:48:06.000Z',
    pickup_location: { address: '1 Main', city: null, lat: 1, lng: 2 },
    patient_first_name: 'Ada',
    patient_date_of_birth: '1950-12-10',
    patient_weight_lbs: 180,
    medications: [{ name: 'x' }],
    requester_first_name: 'Rita',
    requester_last_name: 'Quester',
    requester_email: 'rita@hospital.example',
    is_round_trip_first_trip: false,
    is_round_trip_return_trip: false,
    brand_new_member: 'kept',
  });

  it('v2.0: data validated when present, null when UNAVAILABLE, unknown actions kept', () => {
    const event = {
      event_id: '01HZZZ',
      event_timestamp: '2026-01-28T21:48:06.000Z',
      service_request_id: 'XX-ABCD1234',
      request_status: 'ASSIGNED',
      action: 'SOMETHING_NEW',
      data: data(),
    };
    const parsed = webhookV2EventSchema.parse(event);
    expect(parsed.data?.brand_new_member).toBe('kept');
    expect(parsed.data?.pickup_date_time).toBe('2026-01-28T21:48:06.000Z');
    expect(
      webhookV2EventSchema.parse({ ...event, request_status: 'UNAVAILABLE', data: null }).data,
    ).toBeNull();
  });

  it('v2.0: only the identity is required by the schema; the envelope alone still parses', () => {
    const { requester_email: _drop, ...incomplete } = data();
    // The contract (contract.test.ts) reports these as drift; the schema no longer sinks them.
    expect(webhookDataSchema.safeParse(incomplete).success).toBe(true);
    expect(webhookDataSchema.safeParse({ ...data(), change_request_enabled: null }).success).toBe(
      true,
    );
    const { service_request_id: _id, ...anonymous } = data();
    expect(webhookDataSchema.safeParse(anonymous).success).toBe(false);
    const envelope = webhookV2EnvelopeSchema.parse({
      event_id: '01HZZZ',
      event_timestamp: '2026-01-28T21:48:06Z',
      service_request_id: 'XX-ABCD1234',
      request_status: 'AVAILABLE',
      action: 'BROADCAST_RECEIVED',
      data: { garbage: true },
    });
    expect(envelope.data).toEqual({ garbage: true });
  });

  it('v1.0: request and collection events', () => {
    expect(
      webhookV1EnvelopeSchema.parse({
        event_id: 'e1',
        event_type: 'request.status.available',
        event: { request_id: 'K3J9QX2A', request_current_state: 'awaiting' },
      }).event.request_id,
    ).toBe('K3J9QX2A');
    expect(
      webhookV1EnvelopeSchema.parse({
        event_id: 'e2',
        event_type: 'collection.state.updated',
        event: { collection_id: 'c1', collection_current_state: 'active', request_ids: ['A', 'B'] },
      }).event.request_ids,
    ).toEqual(['A', 'B']);
  });
});
