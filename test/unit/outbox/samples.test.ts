import { describe, expect, it } from 'vitest';
import { parseSamples } from '../../../src/cli/locations.js';
import { TransportError } from '../../../src/errors.js';

const sample = (timestamp: number) => ({ lat: 41.8, lng: -87.6, alt: 180, timestamp });

function refusal(input: string): string {
  try {
    parseSamples(input);
  } catch (error) {
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('cli.invalid_argument'); // exit 2
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('parseSamples (locations --file)', () => {
  it('reads a JSON array and NDJSON alike, keeping the order given', () => {
    const samples = [sample(3), sample(1), { ...sample(2), speed: 9.5 }];
    expect(parseSamples(JSON.stringify(samples))).toEqual(samples);
    expect(parseSamples(samples.map((s) => JSON.stringify(s)).join('\n') + '\n\n')).toEqual(
      samples,
    );
  });

  it('reports every bad sample by position before anything is sent', () => {
    const lines = [
      JSON.stringify(sample(1)),
      '{"lat": 41.8}',
      '[1, 2]',
      JSON.stringify({ ...sample(4), timestamp: 1750000000000 }),
    ];
    expect(refusal(lines.join('\n'))).toMatch(
      /^invalid samples: line 2: lng is missing, alt is missing, timestamp is missing; line 3: a sample must be an object; line 4: timestamp: expected Unix epoch seconds/,
    );
    expect(refusal('[{"lat": 1}]')).toMatch(/^invalid samples: sample 0: lng is missing/);
  });

  it('refuses empty input and broken JSON', () => {
    expect(refusal('  \n')).toBe('no samples in the input');
    expect(refusal('[{"lat": 1},')).toMatch(/^the input is not a JSON array/);
    expect(refusal('{"lat": 1}\nnot json')).toBe('line 2 is not JSON');
  });
});
