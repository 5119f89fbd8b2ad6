import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonWithUnstorableSpelledOut, unstorableTextIn } from '../../../src/db/sql.js';

/** What the string holds that PostgreSQL cannot store, read off its UTF-16 code units. */
function unstorableOf(text: string): 'nul' | 'surrogate' | undefined {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return 'nul';
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (isHigh) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
      else return 'surrogate';
    } else if (isLow) return 'surrogate';
  }
  return undefined;
}

describe('text PostgreSQL cannot store, in JSON text', () => {
  it('finds a NUL and half a surrogate pair, and passes whole pairs and escaped backslashes', () => {
    expect(unstorableTextIn(JSON.stringify({ name: 'a\u0000b' }))).toBe('nul');
    expect(unstorableTextIn(JSON.stringify({ name: 'Smith \ud83d' }))).toBe('surrogate');
    expect(unstorableTextIn(JSON.stringify({ name: '\ude00 alone' }))).toBe('surrogate');
    expect(unstorableTextIn(JSON.stringify({ name: 'reversed \ude00\ud83d' }))).toBe('surrogate');
    expect(unstorableTextIn(JSON.stringify({ name: 'Smile 😀' }))).toBeUndefined();
    // As a service may spell them: escaped pairs, upper-case hex.
    expect(unstorableTextIn('{"name":"\\ud83d\\ude00"}')).toBeUndefined();
    expect(unstorableTextIn('{"name":"\\uD83D\\uDE00"}')).toBeUndefined();
    expect(unstorableTextIn('{"name":"\\uD83D"}')).toBe('surrogate');
    expect(unstorableTextIn('{"name":"\\ud83d\\u0041"}')).toBe('surrogate');
    // A backslash, escaped, then "u0000" or "ud83d": plain text.
    expect(unstorableTextIn(JSON.stringify({ name: '\\u0000 \\ud83d' }))).toBeUndefined();
    expect(unstorableTextIn('{"name":"\\\\\\u0000"}')).toBe('nul');
    expect(unstorableTextIn('{}')).toBeUndefined();
  });

  it('agrees with the string itself on any text, and spells out exactly what it finds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const json = JSON.stringify({ text, list: [text] });
        expect(unstorableTextIn(json)).toBe(unstorableOf(text));
        const spelled = JSON.parse(jsonWithUnstorableSpelledOut(json)) as { text: string };
        expect(unstorableOf(spelled.text)).toBeUndefined();
        if (!unstorableOf(text)) expect(spelled.text).toBe(text);
      }),
      { numRuns: 3_000 },
    );
  });

  it('spells a NUL and half a pair out as their escapes, leaving whole pairs', () => {
    const json = JSON.stringify({ name: 'a\u0000b \ud83d 😀' });
    expect(JSON.parse(jsonWithUnstorableSpelledOut(json))).toEqual({
      name: 'a\\u0000b \\ud83d 😀',
    });
  });
});
