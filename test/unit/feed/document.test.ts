import { describe, expect, it } from 'vitest';
import {
  changeDocument,
  feedKindOf,
  PHI_COLUMNS,
  type ChangeLogRow,
  type OverviewRow,
} from '../../../src/feed/document.js';
import { changeDocumentValidator } from '../../helpers/feed-schema.js';

function row(overrides: Partial<ChangeLogRow> = {}): ChangeLogRow {
  return {
    position: 7,
    request_id: 'K3J9QX2A',
    kind: 'updated',
    source: 'poll',
    committed_at: '2026-11-26T14:02:13.019Z',
    changed_columns: 'transport_agreed_for_time',
    old_state: 'accepted',
    new_state: 'accepted',
    old_values: { transport_agreed_for_time: '2026-11-26T15:00:00.000Z' },
    new_values: { transport_agreed_for_time: '2026-11-26T15:30:00.000Z' },
    ...overrides,
  };
}

function overview(overrides: Partial<OverviewRow> = {}): OverviewRow {
  const time = '2026-11-26T15:30:00.000Z';
  return {
    request_id: 'K3J9QX2A',
    state: 'accepted',
    request_current_state: 'accepted',
    is_unavailable: false,
    unavailable_at: null,
    effective_pickup_time: time,
    transport_pickup_time: time,
    transport_agreed_for_time: time,
    event_dt_utc: time,
    service_level_type: 'BLS',
    service_type: 'Ambulance',
    patient_first_name: 'Seán',
    patient_last_name: "O'Brien",
    account_id: 'ACC1',
    account_name: 'Mercy Health',
    facility_id: 'F1',
    facility_name: 'Mercy Main',
    pickup_address: '2525 S Michigan Ave',
    pickup_city: 'Chicago',
    pickup_lat: 41.88,
    pickup_lng: -87.63,
    destination_address: '1000 N Western Ave',
    destination_city: 'Chicago',
    destination_lat: 41.9,
    destination_lng: -87.7,
    is_round_trip_first_trip: true,
    is_round_trip_return_trip: false,
    collection_id: null,
    user_first_name: 'Dana',
    user_last_name: 'Reyes',
    created_timestamp_utc: time,
    last_updated_timestamp_utc: time,
    synced_at: time,
    ...overrides,
  };
}

describe('the feed kind of a change', () => {
  it.each([
    [{ kind: 'created', changed_columns: 'list_state,patient_first_name' }, 'new'],
    [{ kind: 'unavailable', changed_columns: 'unavailable_at' }, 'unavailable'],
    [{ kind: 'updated', changed_columns: 'list_state' }, 'state'],
    [{ kind: 'updated', changed_columns: 'service_type,request_current_state' }, 'state'],
    [{ kind: 'updated', changed_columns: 'transport_agreed_for_time' }, 'changed'],
    [{ kind: 'updated', changed_columns: 'raw_json' }, 'changed'],
    [{ kind: 'available', changed_columns: 'unavailable_at' }, 'changed'],
    [{ kind: 'available', changed_columns: 'unavailable_at,list_state' }, 'state'],
  ] as const)('%o is %s', (change, kind) => {
    expect(feedKindOf(change)).toBe(kind);
  });
});

describe('a change document', () => {
  const validator = changeDocumentValidator();

  it('leaves out names, date of birth and e-mail by default, everywhere they appear', () => {
    const document = changeDocument(
      row({
        kind: 'created',
        changed_columns: 'list_state,patient_first_name,patient_dob,user_email',
        old_values: null,
        new_values: {
          list_state: 'awaiting',
          patient_first_name: 'Seán',
          patient_dob: '1948-02-29',
          user_email: 'dana@provider.example',
        },
      }),
      overview(),
      { isPhiIncluded: false },
    );
    validator.expectValid(document);
    expect(document.kind).toBe('new');
    // The column names stay: that a name changed is not itself patient data.
    expect(document.changed_columns).toEqual([
      'list_state',
      'patient_first_name',
      'patient_dob',
      'user_email',
    ]);
    expect(document.new_values).toEqual({ list_state: 'awaiting' });
    const text = JSON.stringify(document);
    for (const secret of ['Seán', 'Brien', '1948-02-29', 'dana@', 'Dana', 'Reyes']) {
      expect(text).not.toContain(secret);
    }
    for (const column of PHI_COLUMNS) expect(document.request).not.toHaveProperty(column);
  });

  it('carries them when the sink includes PHI', () => {
    const document = changeDocument(
      row({ new_values: { patient_last_name: 'Byrne' }, changed_columns: 'patient_last_name' }),
      overview(),
      { isPhiIncluded: true },
    );
    validator.expectValid(document);
    expect(document.new_values).toEqual({ patient_last_name: 'Byrne' });
    expect(document.request).toMatchObject({ patient_first_name: 'Seán', user_last_name: 'Reyes' });
  });

  it("sends a profile change's place and time, its patient data only with PHI", () => {
    const profileRow = row({
      kind: 'profile',
      source: 'webhook',
      changed_columns: 'pickup_room_number,patient_membership_primary_id,contact_phone,note',
      old_state: null,
      new_state: null,
      old_values: {
        pickup_room_number: '4B',
        patient_membership_primary_id: 'MBR-1',
        contact_phone: '312-555-0101',
        note: 'DNR on file',
      },
      new_values: {
        pickup_room_number: '5C',
        patient_membership_primary_id: 'MBR-2',
        contact_phone: '312-555-0199',
        note: 'oxygen 2L',
      },
    });
    const without = changeDocument(profileRow, overview(), { isPhiIncluded: false });
    validator.expectValid(without);
    expect(without.kind).toBe('profile');
    expect(without.changed_columns).toHaveLength(4);
    expect(without.old_values).toEqual({ pickup_room_number: '4B' });
    expect(without.new_values).toEqual({ pickup_room_number: '5C' });
    for (const secret of ['MBR-', '555-01', 'DNR', 'oxygen']) {
      expect(JSON.stringify(without)).not.toContain(secret);
    }
    const withPhi = changeDocument(profileRow, overview(), { isPhiIncluded: true });
    validator.expectValid(withPhi);
    expect(withPhi.new_values).toEqual(profileRow.new_values);
  });

  it('has a null request once the request is gone, and still validates', () => {
    const document = changeDocument(row(), undefined, { isPhiIncluded: false });
    expect(document.request).toBeNull();
    validator.expectValid(document);
  });

  it('is refused by the published schema when a member is missing or of the wrong type', () => {
    const good = changeDocument(row(), overview(), { isPhiIncluded: false });
    expect(validator.isValid(good)).toBe(true);
    const { position: _dropped, ...withoutPosition } = good;
    expect(validator.isValid(withoutPosition)).toBe(false);
    expect(validator.isValid({ ...good, kind: 'updated' })).toBe(false);
    expect(validator.isValid({ ...good, committed_at: 'yesterday' })).toBe(false);
    expect(validator.isValid({ ...good, request: { ...good.request, is_unavailable: 0 } })).toBe(
      false,
    );
  });
});
