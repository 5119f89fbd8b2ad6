import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseQuickly, safeParse, type StringTransforms } from '../../../src/api/fast-parse.js';
import {
  fullListPageSchema,
  parseWith,
  requestDetailSchema,
  requestListItemSchema,
  STRING_TRANSFORMS,
  timestampSchema,
} from '../../../src/api/schemas.js';
import { webhookDataSchema, webhookV2EnvelopeSchema } from '../../../src/api/webhook-schemas.js';
import { detailRecord } from '../../helpers/api.js';
import { anyValuesOf, deepFreeze, isUnlikeJson, valuesOf } from '../../helpers/schema-values.js';

const quick = (
  schema: z.ZodType,
  value: unknown,
  transforms: StringTransforms = STRING_TRANSFORMS,
) => parseQuickly(schema, value, transforms);

/**
 * Asserts, over values of `schema`, that a quick verdict is zod's: valid with zod's output,
 * invalid where zod fails; and that only values unlike JSON are left to zod.
 */
function holdsToZod(schema: z.ZodType, runs: number) {
  fc.assert(
    fc.property(anyValuesOf(schema), (value) => {
      deepFreeze(value);
      const verdict = quick(schema, value);
      const zod = schema.safeParse(value);
      if (verdict.kind === 'valid') {
        expect(zod.success).toBe(true);
        expect(verdict.data).toStrictEqual(zod.data);
      } else if (verdict.kind === 'invalid') {
        expect(zod.success).toBe(false);
      } else {
        expect(isUnlikeJson(value)).toBe(true);
      }
    }),
    { numRuns: runs },
  );
}

/** The output of a value the quick parse finds valid. */
function quickData(schema: z.ZodType, value: unknown): unknown {
  const verdict = quick(schema, value);
  if (verdict.kind !== 'valid') throw new Error(`expected valid, got ${verdict.kind}`);
  return verdict.data;
}

describe('parseQuickly', () => {
  it('answers as zod does for the service records, valid or broken (property)', () => {
    holdsToZod(requestDetailSchema, 400);
    holdsToZod(webhookDataSchema, 300);
    holdsToZod(requestListItemSchema, 400);
    holdsToZod(webhookV2EnvelopeSchema, 300);
    holdsToZod(fullListPageSchema, 300);
  });

  it('answers as zod does for the other kinds it compiles (property)', () => {
    const small = z.object({
      id: z.string().min(2),
      count: z.number().int().min(0).max(9),
      ratio: z.number().gt(0).lt(1).nullable(),
      tags: z.array(z.string()).optional(),
      inner: z.strictObject({ on: z.boolean() }).nullish(),
    });
    holdsToZod(small, 500);
    holdsToZod(z.looseObject({ when: timestampSchema, note: z.string().nullish() }), 300);
  });

  it('returns the input itself when nothing in it changes', () => {
    const record = deepFreeze({
      ...(detailRecord('AB-1') as Record<string, unknown>),
      transport_pickup_time: '2026-01-28T14:00:00.000Z',
    });
    const zodData = requestDetailSchema.parse(record) as Record<string, unknown>;
    const data = quickData(requestDetailSchema, record);
    expect(data).toBe(record);
    expect(data).toStrictEqual(zodData);
  });

  it('copies only the objects a transform changes, keeping the rest shared', () => {
    const record: Record<string, unknown> = deepFreeze({
      ...(detailRecord('AB-2') as Record<string, unknown>),
      transport_pickup_time: '2026-03-01T10:00:00+02:00',
    });
    const answer = quickData(requestDetailSchema, record) as Record<string, unknown>;
    expect(answer).not.toBe(record);
    expect(answer.transport_pickup_time).toBe('2026-03-01T08:00:00.000Z');
    expect(answer.pickup_location).toBe(record.pickup_location);
    expect(answer).toStrictEqual(requestDetailSchema.parse(record));
  });

  it('drops the members a stripping object does not declare, as zod does', () => {
    const schema = z.object({ a: z.string() });
    const value = deepFreeze({ b: 1, a: 'x', c: null });
    expect(quickData(schema, value)).toStrictEqual({ a: 'x' });
    expect(quick(z.strictObject({ a: z.string() }), value).kind).toBe('invalid');
  });

  it('finds invalid what zod fails, and leaves to zod what zod treats specially', () => {
    const kind = (schema: z.ZodType, value: unknown) => quick(schema, value).kind;
    expect(kind(requestListItemSchema, { id: 'A', state: 'accepted' })).toBe('invalid');
    expect(kind(z.object({ a: z.number() }), { a: Number.NaN })).toBe('invalid');
    expect(kind(z.number().int(), 2 ** 60)).toBe('invalid');
    expect(kind(timestampSchema, 'yesterday')).toBe('invalid');
    expect(kind(z.looseObject({}), [])).toBe('invalid');
    expect(kind(z.looseObject({}), JSON.parse('{"__proto__": {"x": 1}}'))).toBe('unsure');
    expect(kind(z.looseObject({}), new Date())).toBe('unsure');
    expect(kind(z.looseObject({}), Object.create(null))).toBe('unsure');
  });

  it('leaves to zod every time a schema holding a kind it does not compile', () => {
    const schema = z.object({ at: z.iso.datetime(), n: z.number().default(1) });
    expect(quick(schema, { at: '2026-03-01T10:00:00Z', n: 2 }).kind).toBe('unsure');
    // A transform not named in the map is a kind not compiled, whatever it does.
    expect(quick(timestampSchema, '2026-03-01T10:00:00Z', new Map()).kind).toBe('unsure');
    const result = safeParse(schema, { at: 'no' }, STRING_TRANSFORMS);
    expect(result.success).toBe(false);
  });

  it('parses the service schemas quickly, so that their records do not all go to zod', () => {
    for (const schema of [requestDetailSchema, webhookDataSchema, requestListItemSchema]) {
      const valid = fc
        .sample(valuesOf(schema, false), { numRuns: 200, seed: 42 })
        .filter((value) => !isUnlikeJson(value) && schema.safeParse(value).success);
      expect(valid.length).toBeGreaterThan(10);
      for (const value of valid) expect(quick(schema, value).kind).toBe('valid');
    }
    expect(parseWith(requestDetailSchema, detailRecord('AB-3'))).toMatchObject({ success: true });
  });
});
