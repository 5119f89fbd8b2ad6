import { describe, expect, it } from 'vitest';
import { webhookDataSchema } from '../../../src/api/webhook-schemas.js';
import { PROFILE_COLUMNS } from '../../../src/db/schema/index.js';
import { listStateOf, normalizeWebhookData } from '../../../src/webhooks/normalize-webhook.js';
import { webhookData } from '../../helpers/webhooks.js';

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
