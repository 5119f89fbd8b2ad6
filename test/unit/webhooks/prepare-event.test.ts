import { describe, expect, it } from 'vitest';
import type { StoredRow } from '../../../src/mirror/observations.js';
import { planPartialBatch } from '../../../src/mirror/partial-batch.js';
import { planPartialWrite } from '../../../src/mirror/request-plan.js';
import {
  decideV2Event,
  prepareV2Event,
  type PrepareOptions,
} from '../../../src/webhooks/prepare-event.js';
import { webhookData } from '../../helpers/webhooks.js';

/*
 * A stored v2.0 event decided in pure code: parsed and checked once (prepareV2Event), then weighed
 * against the later event already applied to its request (decideV2Event). And a run of partial
 * observations of distinct requests planned as one (planPartialBatch), each as planPartialWrite
 * plans it alone.
 */

const OPTIONS: PrepareOptions = { shouldFetchInvalid: false };
const AT = '2026-11-21T09:00:00.000Z';
const ID = 'XX-ABCD1234';

function payload(overrides: Record<string, unknown> = {}, data: unknown = webhookData()) {
  return JSON.stringify({
    event_id: 'EV1',
    event_timestamp: AT,
    service_request_id: ID,
    action: 'updated',
    request_status: 'ASSIGNED',
    data,
    ...overrides,
  });
}
const prepare = (json: string, options = OPTIONS) =>
  prepareV2Event('EV1', JSON.parse(json), options);
const laterData = { eventId: 'EV9', eventTimestamp: AT, hasData: true };
const laterMark = { eventId: 'EV9', eventTimestamp: AT, hasData: false };

describe('decideV2Event', () => {
  it('writes plain data with its profile, at the event time', () => {
    const decision = decideV2Event(prepare(payload()), undefined, OPTIONS);
    expect(decision.kind).toBe('write');
    if (decision.kind !== 'write') return;
    expect(decision.write).toMatchObject({ source: 'webhook', observedAt: AT });
    expect(decision.write.content.request_id).toBe(ID);
    expect(decision.write.laterUnavailableAt).toBeUndefined();
    expect(decision.profile.request_id).toBe(ID);
    expect(decision.drift).toEqual([]);
  });

  it('skips an event a later event with data already superseded', () => {
    const decision = decideV2Event(prepare(payload()), laterData, OPTIONS);
    expect(decision).toMatchObject({ kind: 'done', result: { outcome: 'superseded' } });
  });

  it('stores data delivered after a later "unavailable", keeping that mark', () => {
    const decision = decideV2Event(prepare(payload()), laterMark, OPTIONS);
    expect(decision).toMatchObject({ kind: 'write', later: laterMark });
    if (decision.kind === 'write') expect(decision.write.laterUnavailableAt).toBe(AT);
  });

  it('marks unavailable, unless a later event already said anything', () => {
    const json = payload({ request_status: 'UNAVAILABLE', action: 'unavailable' }, null);
    expect(decideV2Event(prepare(json), undefined, OPTIONS)).toMatchObject({
      kind: 'unavailable',
      at: AT,
    });
    expect(decideV2Event(prepare(json), laterMark, OPTIONS)).toMatchObject({
      kind: 'done',
      result: { outcome: 'superseded' },
    });
  });

  it('has nothing to write for an event without data', () => {
    expect(decideV2Event(prepare(payload({}, null)), undefined, OPTIONS)).toMatchObject({
      kind: 'done',
      result: { outcome: 'no_data', error: null },
    });
  });

  it('reports an invalid envelope by member path, never by value', () => {
    const decision = decideV2Event(
      prepare(payload({ event_timestamp: 'Ann Smith' })),
      undefined,
      OPTIONS,
    );
    expect(decision.kind).toBe('done');
    if (decision.kind !== 'done') return;
    expect(decision.result.error).toMatch(/^invalid v2 envelope: event_timestamp/);
    expect(decision.result.error).not.toContain('Ann Smith');
  });

  it('records drift and still writes under evolve; refuses under strict, fetching if asked', () => {
    const json = payload({}, webhookData({ patient_weight_kg: 'heavy' }));
    const evolve = decideV2Event(prepare(json), undefined, OPTIONS);
    expect(evolve).toMatchObject({ kind: 'write', drift: [{ member: 'patient_weight_kg' }] });
    const strict = { shouldFetchInvalid: true, schemaPolicy: 'strict' as const };
    expect(decideV2Event(prepare(json, strict), undefined, strict)).toMatchObject({
      kind: 'refused',
      drift: [{ member: 'patient_weight_kg', problem: 'type' }],
      result: { outcome: 'invalid', fetch: [ID] },
    });
  });

  it('refuses data about another request than the envelope names', () => {
    const json = payload({}, webhookData({ service_request_id: 'XX-OTHER999' }));
    expect(decideV2Event(prepare(json), undefined, OPTIONS)).toMatchObject({
      kind: 'refused',
      result: { error: 'data.service_request_id differs from the envelope' },
    });
  });
});

describe('planPartialBatch', () => {
  const writeOf = (id: string, city: string, at = AT) => {
    const pickup = { ...(webhookData().pickup_location as object), city };
    const json = JSON.stringify({
      event_id: 'EV1',
      event_timestamp: at,
      service_request_id: id,
      action: 'updated',
      request_status: 'ASSIGNED',
      data: webhookData({ service_request_id: id, pickup_location: pickup }),
    });
    const decision = decideV2Event(prepare(json), undefined, OPTIONS);
    if (decision.kind !== 'write') throw new Error(decision.kind);
    return decision.write;
  };

  it('plans each observation as planPartialWrite does alone, gathered per table', () => {
    const first = writeOf('XX-AAAA1111', 'Dublin');
    const second = writeOf('XX-BBBB2222', 'Akron');
    const plan = planPartialBatch(new Map(), new Map(), [first, second]);
    expect(plan.outcomes).toEqual(['new', 'new']);
    const alone = [first, second].map((o) => planPartialWrite(undefined, [], o));
    expect(plan.rows).toEqual(alone.map((p) => (p.outcome === 'new' ? p.row : null)));
    expect(plan.changes).toEqual(alone.map((p) => (p.outcome === 'new' ? p.change : null)));
    expect(plan.locations.map((l) => [l.request_id, l.city])).toEqual(
      expect.arrayContaining([
        ['XX-AAAA1111', 'Dublin'],
        ['XX-BBBB2222', 'Akron'],
      ]),
    );
    expect(plan.accountNames.map((a) => a.account_id)).toEqual(['ORG1', 'ORG1']);
  });

  it('writes nothing, not even the account name, for an observation older than the row', () => {
    const old = writeOf('XX-AAAA1111', 'Dublin', '2026-11-20T09:00:00.000Z');
    const stored = { request_id: 'XX-AAAA1111', synced_at: AT, unavailable_at: null } as StoredRow;
    const plan = planPartialBatch(new Map([[stored.request_id, stored]]), new Map(), [old]);
    expect(plan).toEqual({
      outcomes: ['stale'],
      accountNames: [],
      rows: [],
      movedRoles: [],
      locations: [],
      changes: [],
    });
  });
});
