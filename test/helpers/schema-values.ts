import fc from 'fast-check';
import type * as z from 'zod';
import { dateSchema, STRING_TRANSFORMS } from '../../src/api/schemas.js';

/*
 * Values shaped by zod schemas, for property tests of what checks the service's records: valid
 * ones, and ones with the kinds of drift the service shows (members missing, retyped, unknown).
 */

/** Freezes a value and everything in it, so that a parse that changed its input would throw. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/**
 * Whether `value` holds what JSON.parse never makes, which the quick parse leaves to zod: an own
 * __proto__ member, an object whose prototype is not Object's.
 */
export function isUnlikeJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== Array.prototype) return true;
  if (Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(isUnlikeJson);
}

/** Values of every kind, for members that should not have them. */
const stray = fc.constantFrom<unknown>(
  null,
  undefined,
  0,
  -1,
  1.5,
  2 ** 60,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  '12',
  true,
  [],
  [1, 'a'],
  {},
  { a: 1 },
  '2026-03-01T10:00:00Z',
  '2026-03-01T10:00:00.123+02:00',
  '2026-03-01',
  '03/01/2026',
);

const someDate = fc.date({
  min: new Date('2000-01-01'),
  max: new Date('2040-01-01'),
  noInvalidDate: true,
});

/** Timestamps as the service and its drifts spell them, valid ones and (`isNoisy`) others. */
const timeText = (schema: z.ZodType, isNoisy: boolean) => {
  const spellings = someDate.chain((date) => {
    const iso = date.toISOString();
    if (schema === dateSchema) return fc.constant(iso.slice(0, 10));
    return fc.constantFrom(iso, iso.replace('.000Z', 'Z'), iso.replace('Z', '+00:00'));
  });
  if (!isNoisy) return spellings;
  const others = someDate.chain((date) => {
    const iso = date.toISOString();
    return fc.constantFrom(iso, iso.slice(0, 19), iso.slice(0, 10), iso.replace('T', ' '));
  });
  return fc.oneof(spellings, others, fc.string({ maxLength: 12 }));
};

/**
 * Values shaped by `schema`: each member present or absent, objects with members the schema does
 * not know, in any order; and when `isNoisy`, now and then a member of another kind.
 */
export function valuesOf(schema: z.ZodType, isNoisy: boolean, depth = 0): fc.Arbitrary<unknown> {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const inner = (of: unknown) => valuesOf(of as z.ZodType, isNoisy, depth + 1);
  const valid = ((): fc.Arbitrary<unknown> => {
    if (STRING_TRANSFORMS.has(schema)) return timeText(schema, isNoisy);
    switch (def.type) {
      case 'string':
        return fc.string({ maxLength: 6 });
      case 'number':
        return fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: false }));
      case 'boolean':
        return fc.boolean();
      case 'unknown':
        return fc.jsonValue({ maxDepth: 2 });
      case 'optional':
        return fc.option(inner(def.innerType), { nil: undefined, freq: 4 });
      case 'nullable':
        return fc.option(inner(def.innerType), { nil: null, freq: 4 });
      case 'array':
        return fc.array(inner(def.element), { maxLength: depth > 2 ? 0 : 3 });
      case 'record':
        return fc.dictionary(fc.string({ maxLength: 4 }), inner(def.valueType), { maxKeys: 3 });
      case 'object': {
        const shape = def.shape as Record<string, z.ZodType>;
        const members = Object.fromEntries(
          Object.entries(shape).map(([name, member]) => [name, inner(member)]),
        );
        return fc
          .tuple(
            fc.record(members, { requiredKeys: Object.keys(shape) }),
            fc.subarray(Object.keys(shape), { maxLength: Math.min(3, Object.keys(shape).length) }),
            fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), {
              maxKeys: 2,
            }),
            fc.boolean(),
          )
          .map(([record, dropped, extra, isReversed]) => {
            const entries = Object.entries({ ...record, ...extra }).filter(
              ([name]) => !dropped.includes(name),
            );
            if (isReversed) entries.reverse();
            return Object.fromEntries(entries);
          });
      }
      default:
        throw new Error(`no values for ${def.type}`);
    }
  })();
  return isNoisy
    ? fc.oneof({ weight: 40, arbitrary: valid }, { weight: 1, arbitrary: stray })
    : valid;
}

/** Values of `schema`, half of them with strays. */
export const anyValuesOf = (schema: z.ZodType) =>
  fc.boolean().chain((isNoisy) => valuesOf(schema, isNoisy));
