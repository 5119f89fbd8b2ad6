import { describe, expect, it } from 'vitest';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import { v2Event } from '../../helpers/webhooks.js';

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
