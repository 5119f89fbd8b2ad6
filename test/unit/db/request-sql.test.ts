import { describe, expect, it } from 'vitest';
import type { StoredRow } from '../../../src/mirror/observations.js';
import { INDEXED_COLUMNS, keepsIndexedColumns } from '../../../src/db/store/request-sql.js';

const stored = {
  request_id: 'R1',
  list_state: 'accepted',
  event_dt_utc: '2026-11-22T14:30:00.000Z',
  account_id: 'ACC1',
  collection_id: null,
  unavailable_at: null,
  patient_first_name: 'Seán',
  last_updated_timestamp_utc: '2026-11-21T08:00:00.000Z',
  read_at: '2026-11-21T09:00:00.000Z',
} as unknown as StoredRow;

describe('keepsIndexedColumns', () => {
  it('names the columns of the requests indexes both engines have', () => {
    expect([...INDEXED_COLUMNS].sort()).toEqual([
      'account_id',
      'collection_id',
      'event_dt_utc',
      'list_state',
      'unavailable_at',
    ]);
  });

  it('holds for an edit of other columns only, the summary index’s included', () => {
    const row = {
      ...stored,
      patient_first_name: 'Sean',
      last_updated_timestamp_utc: '2026-11-21T08:10:00.000Z',
      read_at: null,
    };
    expect(keepsIndexedColumns(stored, row)).toBe(true);
  });

  it('fails for a row not stored, and for any indexed column that moves', () => {
    expect(keepsIndexedColumns(undefined, stored)).toBe(false);
    for (const column of INDEXED_COLUMNS) {
      for (const value of ['other', null, undefined]) {
        if (value === stored[column]) continue;
        expect(keepsIndexedColumns(stored, { ...stored, [column]: value }), column).toBe(false);
      }
    }
  });
});
