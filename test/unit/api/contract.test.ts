import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { checkContract, type Contract, type Drift } from '../../../src/api/contract.js';
import { requestDetailContract } from '../../../src/api/schemas.js';
import { webhookDataContract } from '../../../src/api/webhook-schemas.js';
import { detailRecord } from '../../helpers/api.js';
import { anyValuesOf, deepFreeze, isUnlikeJson } from '../../helpers/schema-values.js';

type Json = Record<string, unknown>;

/** The 13 members the service changed from organization-configured strings to booleans. */
const RETYPED_2026_03_01 = [
  'can_ambulate',
  'destination_is_home',
  'escalated',
  'has_own_wheelchair',
  'hospice',
  'is_dialysis_trip',
  'is_inpatient',
  'is_recent_onset',
  'isolation_precaution',
  'patient_is_ready',
  'pickup_is_home',
  'return_on_will_call',
  'wait_and_return',
];

const detail = (id: string, extra: Json = {}) => detailRecord(id, extra) as Json;

function webhookData(extra: Json = {}): Json {
  return {
    service_request_id: 'XX-ABCD1234',
    request_current_state: 'accepted',
    change_request_enabled: true,
    service_type: 'Ambulance',
    service_level_type: 'BLS',
    scheduling_option: 'specific',
    scheduling_type: 'one_way',
    organization_id: 'org-1',
    account_name: 'General',
    service_request_web_url: 'https://app.example/r/XX-ABCD1234',
    requester_first_name: 'Rita',
    requester_last_name: 'Quester',
    requester_email: 'rita@hospital.example',
    is_round_trip_first_trip: false,
    is_round_trip_return_trip: false,
    ...extra,
  };
}

describe('the schema contract, member by member', () => {
  it('passes a documented record with no drift and normalizes its timestamps', () => {
    const result = checkContract<Json>(
      requestDetailContract,
      detail('A1', { transport_pickup_time: '2022-04-28T14:00:00Z' }),
      'evolve',
    );
    expect(result.kind).toBe('ok');
    expect(result.drift).toEqual([]);
    if (result.kind === 'ok')
      expect(result.record.transport_pickup_time).toBe('2022-04-28T14:00:00.000Z');
  });

  it('records a missing member, and not a location id, which the full list omits by design', () => {
    const { patient_last_name: _drop, ...record } = detail('A1', {
      pickup_location: { lat: 1, lng: 2, city: 'X' },
    });
    const result = checkContract<Json>(requestDetailContract, record, 'evolve');
    expect(result.kind).toBe('ok');
    expect(result.drift).toContainEqual({
      member: 'patient_last_name',
      problem: 'missing',
      expected: 'string',
      received: null,
    });
    expect(result.drift.map((d) => d.member)).not.toContain('pickup_location.id');
    // Members of a nested object are named by their dotted path.
    expect(result.drift.map((d) => d.member)).toContain('pickup_location.zip');
  });

  it('replaces a retyped member with null, keeps every other member, and never the value in the drift', () => {
    const result = checkContract<Json>(
      requestDetailContract,
      detail('A1', { patient_dob: 19480229, pickup_location: { lat: 'forty', lng: 2 } }),
      'evolve',
    );
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    expect(result.record.patient_dob).toBeNull();
    expect((result.record.pickup_location as Json).lat).toBeNull();
    expect((result.record.pickup_location as Json).lng).toBe(2);
    expect(result.record.patient_first_name).toBe(detail('A1').patient_first_name);
    const types = result.drift.filter((d) => d.problem === 'type');
    expect(types).toEqual([
      { member: 'patient_dob', problem: 'type', expected: 'date', received: 'number' },
      { member: 'pickup_location.lat', problem: 'type', expected: 'number', received: 'string' },
    ]);
    expect(JSON.stringify(result.drift)).not.toMatch(/19480229|forty/);
  });

  it('stores a numeric string as its number, and records it as drift', () => {
    const result = checkContract<Json>(
      requestDetailContract,
      detail('A1', { pickup_location: { lat: ' 41.88 ', lng: '-87.6' } }),
      'evolve',
    );
    expect(result.kind === 'ok' && result.record.pickup_location).toMatchObject({
      lat: 41.88,
      lng: -87.6,
    });
    expect(result.drift.filter((d) => d.problem === 'type').map((d) => d.member)).toEqual([
      'pickup_location.lat',
      'pickup_location.lng',
    ]);
  });

  it('never reads "false" as a boolean, nor "1" as true', () => {
    for (const text of ['false', 'true', '1', '0', 'No']) {
      const result = checkContract<Json>(
        requestDetailContract,
        detail('A1', { is_round_trip_first_trip: text }),
        'evolve',
      );
      expect(result.kind === 'ok' && result.record.is_round_trip_first_trip, text).toBeNull();
    }
  });

  it('records unknown members at any depth and keeps them in the record', () => {
    const result = checkContract<Json>(
      requestDetailContract,
      detail('A1', { mileage_estimate: 12.4, account: { id: 'acc', name: 'N', tier: 'gold' } }),
      'evolve',
    );
    expect(result.kind === 'ok' && result.record.mileage_estimate).toBe(12.4);
    const unknown = result.drift
      .filter((d) => d.problem === 'unknown')
      .sort((a, b) => (a.member < b.member ? -1 : 1));
    expect(unknown).toEqual([
      { member: 'account.tier', problem: 'unknown', expected: null, received: 'string' },
      { member: 'mileage_estimate', problem: 'unknown', expected: null, received: 'number' },
    ]);
  });

  it('refuses a record without its identity under either policy', () => {
    for (const policy of ['evolve', 'strict'] as const) {
      const { request_current_state: _drop, ...noState } = detail('A1');
      expect(checkContract(requestDetailContract, noState, policy)).toMatchObject({
        kind: 'refused',
        reason: 'request_current_state: missing',
      });
      expect(
        checkContract(requestDetailContract, detail('A1', { request_id: 7 }), policy),
      ).toMatchObject({ kind: 'refused', reason: 'request_id: expected a non-empty string' });
      expect(checkContract(requestDetailContract, 'text', policy).kind).toBe('refused');
    }
  });

  it('under strict refuses missing and retyped members, naming them, but lets unknown ones pass', () => {
    const retyped = checkContract(
      requestDetailContract,
      detail('A1', { patient_dob: 19480229 }),
      'strict',
    );
    expect(retyped).toMatchObject({
      kind: 'refused',
      reason: 'patient_dob: expected date, got number',
    });
    const unknown = checkContract(requestDetailContract, detail('A1', { extra: 1 }), 'strict');
    expect(unknown.kind).toBe('ok');
  });

  it('webhook data: the 13 members retyped on 2026-03-01 arrive as strings: NULL and drift, the rest applies', () => {
    const legacy = Object.fromEntries(RETYPED_2026_03_01.map((name) => [name, 'Yes']));
    const result = checkContract<Json>(webhookDataContract, webhookData(legacy), 'evolve');
    expect(result.kind).toBe('ok');
    if (result.kind !== 'ok') return;
    for (const name of RETYPED_2026_03_01) expect(result.record[name], name).toBeNull();
    expect(result.record.service_type).toBe('Ambulance');
    const typeDrift = result.drift.filter((d: Drift) => d.problem === 'type');
    expect(typeDrift.map((d) => d.member).sort()).toEqual([...RETYPED_2026_03_01].sort());
    expect(typeDrift.every((d) => d.expected === 'boolean' && d.received === 'string')).toBe(true);
  });

  it('webhook data: a null or missing non-nullable member is drift, not a refusal', () => {
    const { requester_email: _drop, ...missing } = webhookData({ change_request_enabled: null });
    const result = checkContract<Json>(webhookDataContract, missing, 'evolve');
    expect(result.kind).toBe('ok');
    expect(result.drift).toContainEqual({
      member: 'change_request_enabled',
      problem: 'type',
      expected: 'boolean',
      received: 'null',
    });
    expect(result.drift).toContainEqual({
      member: 'requester_email',
      problem: 'missing',
      expected: 'string',
      received: null,
    });
    expect(checkContract(webhookDataContract, missing, 'strict').kind).toBe('refused');
  });
});

/**
 * The record and the retyped members as the contract made them with zod alone, before records
 * were checked in place (src/api/fast-parse.ts): zod's whole-record parse, else each member
 * parsed on its own, one that fails replaced by its number (numeric text) or null.
 */
function byZodAlone(schema: z.ZodObject, value: Json, prefix = '') {
  const whole = schema.safeParse(value);
  if (whole.success) return { record: whole.data as Json, retyped: [] as string[] };
  const record: Json = { ...value };
  const retyped: string[] = [];
  for (const [name, member] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const received = value[name];
    if (received === undefined || received === null) continue;
    let inner = member;
    while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable)
      inner = inner.unwrap() as z.ZodType;
    const isObject = typeof received === 'object' && !Array.isArray(received);
    if (inner instanceof z.ZodObject && isObject) {
      const nested = byZodAlone(inner, received as Json, `${prefix}${name}.`);
      record[name] = nested.record;
      retyped.push(...nested.retyped);
      continue;
    }
    const parsed = inner.safeParse(received);
    if (parsed.success) {
      record[name] = parsed.data;
      continue;
    }
    retyped.push(prefix + name);
    const text = typeof received === 'string' ? received.trim() : '';
    const isNumeric = inner instanceof z.ZodNumber && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text);
    record[name] = isNumeric ? Number(text) : null;
  }
  return { record, retyped };
}

describe('the schema contract, checked in place', () => {
  const contracts: [string, Contract][] = [
    ['detail', requestDetailContract],
    ['webhook data', webhookDataContract],
  ];
  it.each(contracts)(
    '%s: gives what zod alone gave, valid or drifted (property)',
    (_, contract) => {
      fc.assert(
        fc.property(anyValuesOf(contract.schema), (value) => {
          fc.pre(!isUnlikeJson(value) && typeof value === 'object' && value !== null);
          deepFreeze(value);
          const result = checkContract<Json>(contract, value, 'evolve');
          if (result.kind === 'refused') return;
          const alone = byZodAlone(contract.schema, value as Json);
          expect(result.record).toStrictEqual(alone.record);
          const retyped = result.drift.filter((d) => d.problem === 'type' && d.received !== 'null');
          expect(retyped.map((d) => d.member).sort()).toEqual([...alone.retyped].sort());
        }),
        { numRuns: 300 },
      );
    },
  );
});
