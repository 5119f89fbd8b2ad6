import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../src/json.js';

/**
 * An object made of `entries`, each an own member: an assignment of `"__proto__"` would set the
 * prototype instead (fast-check's JSON values hold such keys, as JSON.parse makes them).
 */
const objectOf = (entries: [string, unknown][]): Record<string, unknown> =>
  Object.defineProperties(
    {},
    Object.fromEntries(
      entries.map(([key, value]) => [
        key,
        { value, enumerable: true, writable: true, configurable: true },
      ]),
    ),
  );

/** The definition: JSON.stringify with a replacer that hands it each object with sorted keys. */
const bySortingReplacer = (value: unknown) =>
  JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return member;
    const object = member as Record<string, unknown>;
    return objectOf(
      Object.keys(object)
        .sort()
        .map((key) => [key, object[key]]),
    );
  });

/** The same value with every object's keys in the order `order` picks. */
function reordered(value: unknown, order: (keys: string[]) => string[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => reordered(item, order));
  const object = value as Record<string, unknown>;
  return objectOf(order(Object.keys(object)).map((key) => [key, reordered(object[key], order)]));
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

  it('keeps a "__proto__" member, as JSON.parse makes it, in order and out of it', () => {
    expect(stableStringify(JSON.parse('{"__proto__":{"x":1},"b":1}'))).toBe(
      '{"__proto__":{"x":1},"b":1}',
    );
    expect(stableStringify(JSON.parse('{"b":1,"__proto__":{"y":2,"x":1}}'))).toBe(
      '{"__proto__":{"x":1,"y":2},"b":1}',
    );
    expect(stableStringify(JSON.parse('{"a":{"c":1,"__proto__":[]}}'))).toBe(
      '{"a":{"__proto__":[],"c":1}}',
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
