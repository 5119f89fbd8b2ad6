import { describe, expect, it } from 'vitest';
import { contentHash, normalizeDetail, stableStringify } from '../../../src/sync/normalize.js';
import { detailRecord, listFields } from '../../helpers/records.js';

describe('normalizeDetail', () => {
  it('turns every member type into its column: text, canonical times, dates, booleans as 0/1', () => {
    const { content } = normalizeDetail(
      detailRecord({
        transport_pickup_time: '2026-11-22T16:00:00+02:00',
        patient_dob: '1948-02-29T00:00:00Z',
        is_round_trip_first_trip: true,
        is_round_trip_return_trip: false,
      }),
      listFields({ created_timestamp_utc: '2026-11-20T08:00:00Z' }),
    );
    expect(content).toMatchObject({
      request_id: 'K3J9QX2A',
      patient_first_name: 'Seán',
      patient_last_name: "O'Brien",
      patient_dob: '1948-02-29',
      transport_pickup_time: '2026-11-22T14:00:00.000Z',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
      created_timestamp_utc: '2026-11-20T08:00:00.000Z',
      is_round_trip_first_trip: 1,
      is_round_trip_return_trip: 0,
      account_id: 'ACC1',
      facility_id: 'F1',
      collection_id: 'COL1',
    });
  });

  it('stores absent and null members as NULL, and an empty responder as NULL like webhooks do', () => {
    const { content, locations, account, facility } = normalizeDetail(
      detailRecord({
        patient_last_name: null,
        patient_dob: 'not a date',
        is_round_trip_first_trip: null,
        is_round_trip_return_trip: undefined,
        user: { first_name: '', last_name: '', email: '' },
        destination_location: null,
        account: { id: '', name: 'no id' },
        facility: null,
        transport_agreed_for_time: null,
      }),
    );
    expect(content).toMatchObject({
      patient_last_name: null,
      patient_dob: null,
      is_round_trip_first_trip: null,
      is_round_trip_return_trip: null,
      user_first_name: null,
      user_last_name: null,
      user_email: null,
      transport_agreed_for_time: null,
      facility_id: null,
    });
    expect(locations.map((row) => row.role)).toEqual(['pickup']);
    expect(account).toBeNull();
    expect(facility).toBeNull();
  });

  it('takes the list state from the list, else from a current state that is one', () => {
    expect(
      normalizeDetail(detailRecord(), listFields({ state: 'completed' })).content.list_state,
    ).toBe('completed');
    expect(normalizeDetail(detailRecord()).content.list_state).toBe('accepted');
    const pending = detailRecord({ request_current_state: 'pending' });
    expect(normalizeDetail(pending).content).toMatchObject({
      list_state: null,
      request_current_state: 'pending',
    });
  });

  it('derives the event time as the service does: the list says, else agreed, else pickup, else created', () => {
    const list = listFields({ event_dt_utc: '2026-11-23T09:00:00Z' });
    expect(normalizeDetail(detailRecord(), list).content.event_dt_utc).toBe(
      '2026-11-23T09:00:00.000Z',
    );
    const { event_dt_utc: _event, ...noEvent } = listFields({
      created_timestamp_utc: '2026-11-20T08:00:00Z',
    });
    expect(normalizeDetail(detailRecord(), noEvent).content.event_dt_utc).toBe(
      '2026-11-22T14:30:00.000Z',
    );
    const notAgreed = detailRecord({ transport_agreed_for_time: null });
    expect(normalizeDetail(notAgreed, noEvent).content.event_dt_utc).toBe(
      '2026-11-22T14:00:00.000Z',
    );
    const noTimes = detailRecord({ transport_agreed_for_time: null, transport_pickup_time: null });
    expect(normalizeDetail(noTimes, noEvent).content.event_dt_utc).toBe('2026-11-20T08:00:00.000Z');
  });

  it('writes locations with their ids, fields as JSON per scope, and the account and facility', () => {
    const normalized = normalizeDetail(detailRecord());
    expect(normalized.locations[0]).toMatchObject({
      request_id: 'K3J9QX2A',
      role: 'pickup',
      location_id: 'LOC1',
      lat: 41.88,
      zip: '60601',
    });
    expect(normalized.locations[1]).toMatchObject({ role: 'destination', name: null });
    expect(normalized.fields).toEqual([
      { request_id: 'K3J9QX2A', scope: 'patient', name: 'weight_lbs', value_json: '180' },
      { request_id: 'K3J9QX2A', scope: 'patient', name: 'isolation', value_json: null },
      { request_id: 'K3J9QX2A', scope: 'request', name: 'o2_lpm', value_json: '"2"' },
      {
        request_id: 'K3J9QX2A',
        scope: 'request',
        name: 'notes',
        value_json: '"Stairs at entrance"',
      },
    ]);
    expect(normalized.account).toEqual({
      account_id: 'ACC1',
      name: 'Mercy Health',
      service_levels_json: '["ALS","BLS"]',
      facilities_json: '[{"id":"F1","name":"Mercy Main"}]',
    });
    expect(normalized.facility).toEqual({
      facility_id: 'F1',
      name: 'Mercy Main',
      account_id: 'ACC1',
    });
  });
});

describe('contentHash', () => {
  it('ignores location ids and member order, and changes with any content', () => {
    const record = detailRecord();
    const { id: _pickupId, ...pickupWithoutId } = record.pickup_location!;
    const reordered = Object.fromEntries(Object.entries(record).reverse());
    expect(contentHash(reordered as typeof record)).toBe(contentHash(record));
    expect(contentHash({ ...record, pickup_location: pickupWithoutId })).toBe(contentHash(record));
    expect(contentHash({ ...record, patient_dob: '1948-03-01' })).not.toBe(contentHash(record));
    expect(stableStringify({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });
});
