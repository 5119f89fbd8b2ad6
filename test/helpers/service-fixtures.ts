import type { Clock } from '../../src/clock.js';

/*
 * What the service's tests share without nock: addresses, credentials, a fake clock and records.
 * Importing nock switches its interception on for the whole file, so a test of the real wire
 * (test/unit/api/wire.test.ts) takes these from here rather than from api.ts.
 */

/** Base addresses of the tests: one bare, one with a trailing slash, one with a path prefix. */
export const AUTH = 'https://auth.example';
export const HUB = 'https://hub.example/api/';
export const BASE = 'https://base.example/svc';
export const CLIENT_ID = 'client-id-123';
export const CLIENT_SECRET = 'sup3r-s3cret-value';
export const TOKEN = 'eyJhbGciOi.token-one.sig';
export const TOKEN_2 = 'eyJhbGciOi.token-two.sig';
export const START_MS = Date.UTC(2026, 0, 28, 12, 0, 0);

/** A clock whose sleep resolves at once, advances time, and records the delay. */
export interface FakeClock extends Clock {
  sleeps: number[];
  advance(ms: number): void;
}

/** A fake clock starting at `startMs`. */
export function createFakeClock(startMs = START_MS): FakeClock {
  let now = startMs;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

/** A full request detail record as the detail endpoint returns it. */
export function detailRecord(id: string, overrides: Record<string, unknown> = {}) {
  const location = (name: string) => ({
    id: `loc-${name}`,
    lat: 40.1,
    lng: -74.2,
    zip: '10001',
    city: 'New York',
    name,
    state: 'NY',
    street: '1 Main St',
    address: '1 Main St, New York, NY 10001',
    country: 'US',
  });
  return {
    request_id: id,
    patient_first_name: 'Ada',
    patient_last_name: 'Lovelace',
    patient_dob: '1950-12-10',
    pickup_location: location('General Hospital'),
    destination_location: location('Home'),
    transport_pickup_time: '2026-01-28T14:00:00Z',
    transport_agreed_for_time: null,
    service_level_type: 'BLS',
    service_type: 'Ambulance',
    account: {
      id: 'acc-1',
      name: 'General Hospital',
      service_levels: ['ALS', 'BLS'],
      facilities: [],
    },
    facility: { id: 'fac-1', name: 'Main Campus' },
    user: { first_name: 'Pat', last_name: 'Driver', email: 'pat@provider.example' },
    enabled_patient_fields: { patient_weight_lbs: null },
    enabled_request_fields: {},
    request_current_state: 'accepted',
    is_round_trip_first_trip: false,
    is_round_trip_return_trip: false,
    collection_id: 'col-1',
    ...overrides,
  };
}

/** A partial-list element. */
export function listItem(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    state: 'accepted',
    created_timestamp_utc: '2026-01-27T10:00:00Z',
    event_dt_utc: '2026-01-28T14:00:00.000Z',
    last_updated_timestamp_utc: '2026-01-28T09:30:00+00:00',
    ...overrides,
  };
}
