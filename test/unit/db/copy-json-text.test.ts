import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../../src/db/copy/compare.js';

/*
 * The text `copy` hashes a JSON value by: SQLite keeps JSON as it was written, PostgreSQL's jsonb
 * gives it back with its keys in its own order and its own spacing. Equal values must give equal
 * text, or every table with JSON would compare unequal.
 */

/** The same value with every object's keys in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, member]) => [key, reversed(member)]),
  );
}

describe('jsonText', () => {
  it('is JSON of the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(jsonText(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('does not depend on the order of object keys', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonText(reversed(value))).toBe(jsonText(value));
      }),
    );
  });

  it("reads PostgreSQL's jsonb text and the text SQLite kept alike", () => {
    const written = '{"b": [1, 2.5, {"z": null, "a": "x\\"y"}], "a": true, "10": "ten", "9": -0}';
    const jsonb = '{"9": 0, "a": true, "b": [1, 2.5, {"a": "x\\"y", "z": null}], "10": "ten"}';
    expect(jsonText(JSON.parse(written))).toBe(jsonText(JSON.parse(jsonb)));
    expect(jsonText(JSON.parse(written))).toBe(
      '{"10":"ten","9":0,"a":true,"b":[1,2.5,{"a":"x\\"y","z":null}]}',
    );
  });
});
