import { describe, expect, it } from 'vitest';
import { PROFILE_COLUMNS, rowMaker } from '../../../src/db/schema/index.js';
import { profileRow } from '../../../src/webhooks/normalize-webhook.js';
import type { WebhookData } from '../../../src/api/webhook-schemas.js';

describe('rows made from a template', () => {
  it('gives a fresh row of every column, null, each time: filling one leaves the next empty', () => {
    const newRow = rowMaker<Record<string, unknown>>(['a', 'b', 'c']);
    const first = newRow();
    first.a = 1;
    expect(first).toEqual({ a: 1, b: null, c: null });
    expect(newRow()).toEqual({ a: null, b: null, c: null });
  });

  it('makes a profile row hold every request_profiles column, and only the data object’s own', () => {
    const data = {
      service_request_id: 'REQ-1',
      patient_gender: 'F',
      o2: 'yes',
    } as unknown as WebhookData;
    const row = profileRow(data);
    expect(Object.keys(row).sort()).toEqual([...PROFILE_COLUMNS].sort());
    expect(row).toMatchObject({ request_id: 'REQ-1', patient_gender: 'F', o2: 'yes' });
    expect(profileRow({ service_request_id: 'REQ-2' } as WebhookData).patient_gender).toBeNull();
  });
});
