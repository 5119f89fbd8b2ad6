import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../src/json.js';

/** The definition: JSON.stringify with a replacer that hands it each object with sorted keys. */
const bySortingReplacer = (value: unknown) =>
  JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return member;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(member).sort())
      sorted[key] = (member as Record<string, unknown>)[key];
    return sorted;
  });

/** The same value with every object's keys in the order `order` picks. */
function reordered(value: unknown, order: (keys: string[]) => string[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => reordered(item, order));
  const object = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of order(Object.keys(object))) out[key] = reordered(object[key], order);
  return out;
}

describe('stableStringify', () => {
  it('prints what the sorting replacer prints, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stableStringify(value)).toBe(bySortingReplacer(value));
      }),
      { numRuns: 500 },
    );
  });

  it('prints equal content equally, whatever the order of its keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stableStringify(reordered(value, (keys) => [...keys].reverse()))).toBe(
          stableStringify(value),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('leaves the value it prints as it was', () => {
    const value = { b: [{ d: 1, c: 2 }], a: { y: null, x: 'text' } };
    const before = JSON.stringify(value);
    expect(stableStringify(value)).toBe('{"a":{"x":"text","y":null},"b":[{"c":2,"d":1}]}');
    expect(JSON.stringify(value)).toBe(before);
    expect(Object.keys(value)).toEqual(['b', 'a']);
  });
});
