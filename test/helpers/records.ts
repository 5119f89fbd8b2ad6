import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DetailLike, ListFields } from '../../src/sync/normalize.js';

/** A fresh directory for one test's database files. */
export function tempDir(prefix = 'transport-sync-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A detail record as the service's detail endpoint sends it, with overrides. */
export function detailRecord(
  overrides: Partial<DetailLike> & Record<string, unknown> = {},
): DetailLike & Record<string, unknown> {
  return {
    request_id: 'K3J9QX2A',
    patient_first_name: 'Seán',
    patient_last_name: "O'Brien",
    patient_dob: '1948-02-29',
    pickup_location: {
      id: 'LOC1',
      lat: 41.88,
      lng: -87.63,
      zip: '60601',
      city: 'Chicago',
      name: 'Mercy Hospital',
      state: 'IL',
      street: '2525 S Michigan Ave',
      address: '2525 S Michigan Ave, Chicago, IL 60616',
      country: 'US',
    },
    destination_location: {
      id: 'LOC2',
      lat: 41.9,
      lng: -87.7,
      zip: '60622',
      city: 'Chicago',
      name: null,
      state: 'IL',
      street: '1000 N Western Ave',
      address: '1000 N Western Ave, Chicago, IL 60622',
      country: 'US',
    },
    transport_pickup_time: '2026-11-22T14:00:00Z',
    transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
    service_level_type: 'BLS',
    service_type: 'Ambulance',
    account: {
      id: 'ACC1',
      name: 'Mercy Health',
      service_levels: ['ALS', 'BLS'],
      facilities: [{ id: 'F1', name: 'Mercy Main' }],
    },
    facility: { id: 'F1', name: 'Mercy Main' },
    user: { first_name: 'Dana', last_name: 'Reyes', email: 'dana@provider.example' },
    enabled_patient_fields: { weight_lbs: 180, isolation: null },
    enabled_request_fields: { o2_lpm: '2', notes: 'Stairs at entrance' },
    request_current_state: 'accepted',
    is_round_trip_first_trip: true,
    is_round_trip_return_trip: false,
    collection_id: 'COL1',
    ...overrides,
  };
}

/** The partial list's fields for a record. */
export function listFields(overrides: Partial<ListFields> = {}): ListFields {
  return {
    state: 'accepted',
    created_timestamp_utc: '2026-11-20T08:00:00Z',
    event_dt_utc: '2026-11-22T14:30:00Z',
    last_updated_timestamp_utc: '2026-11-21T08:00:00Z',
    ...overrides,
  };
}
