import { describe, expect, it } from 'vitest';
import type { ProfileRow } from '../../../src/db/schema/index.js';
import {
  changedProfileColumns,
  planProfileChanges,
  type StoredProfile,
} from '../../../src/mirror/profile-plan.js';

const AT = '2026-11-26T14:00:00.000Z';

/** A profile as a webhook fills it: every column null but those given. */
function profile(values: Record<string, string | number | null> = {}): ProfileRow {
  return { request_id: 'K3J9QX2A', ...values };
}

function stored(eventId: string, values: Record<string, unknown> = {}): StoredProfile {
  return { request_id: 'K3J9QX2A', event_id: eventId, updated_at: AT, ...values };
}

const plan = (incoming: ProfileRow, eventId: string, before?: StoredProfile) =>
  planProfileChanges(
    [{ profile: incoming, eventId, updatedAt: AT }],
    new Map<string, StoredProfile>(before ? [[String(before.request_id), before]] : []),
  );

describe('profile changes', () => {
  it("logs no change for a request's first profile: its requests row's change covers it", () => {
    expect(plan(profile({ pickup_room_number: '4B', patient_age: 81 }), 'e2')).toEqual([]);
  });

  it('logs the columns that changed, before and after', () => {
    const changes = plan(
      profile({ pickup_room_number: '5C', patient_age: 81, hospice: 1 }),
      'e3',
      stored('e2', { pickup_room_number: '4B', patient_age: 81, hospice: 0 }),
    );
    expect(changes).toEqual([
      {
        request_id: 'K3J9QX2A',
        observed_at: AT,
        kind: 'profile',
        source: 'webhook',
        changed_columns: 'pickup_room_number,hospice',
        old_state: null,
        new_state: null,
        old_values_json: JSON.stringify({ pickup_room_number: '4B', hospice: 0 }),
        new_values_json: JSON.stringify({ pickup_room_number: '5C', hospice: 1 }),
      },
    ]);
  });

  it('logs nothing when the same profile comes again, JSON keys reordered included', () => {
    const before = stored('e2', {
      pickup_room_number: '4B',
      medications_json: '{"dose":"2L","name":"oxygen"}',
    });
    const again = profile({
      pickup_room_number: '4B',
      medications_json: '{"name": "oxygen", "dose": "2L"}',
    });
    expect(plan(again, 'e3', before)).toEqual([]);
    expect(changedProfileColumns(before, { ...again, medications_json: '{"name":"air"}' })).toEqual(
      ['medications_json'],
    );
  });

  it('logs nothing for an event older than the one that wrote the stored profile', () => {
    expect(plan(profile({ pickup_room_number: '9Z' }), 'e1', stored('e2'))).toEqual([]);
    expect(plan(profile({ pickup_room_number: '9Z' }), 'e2', stored('e2'))).toHaveLength(1);
  });
});
