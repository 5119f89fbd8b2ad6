import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { createFaultInjector } from '../../../src/simulator/faults.js';
import { validateLocations } from '../../../src/simulator/locations.js';
import { createRandom } from '../../../src/simulator/random.js';
import { formatTimestamp, quantize } from '../../../src/simulator/serialize.js';
import {
  checkOptionalText,
  parseJson,
  requiredTimestamp,
} from '../../../src/simulator/validation.js';

const sample = { lat: 1, lng: 2, alt: 3, timestamp: 1_700_000_000.5 };

describe('simulator location validation', () => {
  it('accepts a valid batch, with or without speed, and an empty one', () => {
    expect(
      validateLocations([sample, { ...sample, speed: 4 }, { ...sample, speed: null }]),
    ).toBeNull();
    expect(validateLocations([])).toBeNull();
  });

  it('reports each sample, {} for valid ones', () => {
    const reply = validateLocations([sample, {}, { ...sample, speed: 'fast' }, 7]);
    expect(reply?.status).toBe(400);
    const required = [{ message: 'This field is required.', code: 'common:required' }];
    expect(reply?.body).toEqual([
      {},
      { lat: required, lng: required, alt: required, timestamp: required },
      { speed: [{ message: 'A valid number is required.', code: 'common:invalid' }] },
      {
        non_field_errors: [
          {
            message: 'Invalid data. Expected a dictionary, but got number.',
            code: 'common:invalid',
          },
        ],
      },
    ]);
  });

  it('refuses a non-list and more than 200 samples', () => {
    expect(validateLocations({})?.body).toMatchObject({
      non_field_errors: [{ code: 'common:not_a_list' }],
    });
    expect(validateLocations(Array(201).fill(sample))?.status).toBe(400);
    expect(validateLocations(Array(200).fill(sample))).toBeNull();
  });
});

describe('simulator body validation', () => {
  it('parses JSON, treating an empty body as {}', () => {
    expect(parseJson('')).toEqual({ ok: true, value: {} });
    const bad = parseJson('{nope');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.response.status).toBe(400);
  });

  it('counts characters, not UTF-16 units, for text limits', () => {
    expect(checkOptionalText('🚑'.repeat(450), 450)).toEqual([]);
    expect(checkOptionalText('a'.repeat(451), 450)).toHaveLength(1);
    expect(checkOptionalText(null, 450)).toEqual([]);
    expect(checkOptionalText(5, 450)).toHaveLength(1);
  });

  it('parses ISO-8601 timestamps in any offset', () => {
    expect(requiredTimestamp('2025-06-15T14:00:00+02:00')).toEqual({
      ms: Date.UTC(2025, 5, 15, 12),
    });
    expect(requiredTimestamp(undefined)).toMatchObject({ errors: [{ code: 'common:required' }] });
    expect(requiredTimestamp('15/06/2025')).toMatchObject({ errors: [{ code: 'common:invalid' }] });
  });
});

describe('simulator timestamp forms', () => {
  const ms = Date.UTC(2025, 5, 15, 12, 0, 5, 123);
  it('writes each style, dropping what a style cannot carry', () => {
    expect(formatTimestamp(ms, 'millis')).toBe('2025-06-15T12:00:05.123Z');
    expect(formatTimestamp(ms, 'seconds')).toBe('2025-06-15T12:00:05Z');
    expect(formatTimestamp(ms, 'offset')).toBe('2025-06-15T12:00:05+00:00');
    expect(quantize(ms, 'seconds')).toBe(ms - 123);
  });
});

describe('simulator fault decisions', () => {
  const injector = (seed = 1) =>
    createFaultInjector({ rng: createRandom(seed), clock: systemClock });

  it('decides nothing when no fault is set', () => {
    const faults = injector();
    expect(faults.decide('list')).toEqual({ fault: { kind: 'none' }, slowMs: 0 });
  });

  it('stacks the rates so each kind gets its share', () => {
    const faults = injector();
    faults.set({ errorRate: 0.25, rateLimitRate: 0.25, dropRate: 0.25, truncateRate: 0.25 });
    const kinds = Array.from({ length: 400 }, () => faults.decide('detail').fault.kind);
    for (const kind of ['error', 'rate_limit', 'drop', 'truncate']) {
      const share = kinds.filter((k) => k === kind).length / kinds.length;
      expect(share, kind).toBeGreaterThan(0.15);
    }
    expect(kinds).not.toContain('none');
  });

  it('limits random faults to the listed endpoints but always applies gone and token outage', () => {
    const faults = injector();
    faults.set({ errorRate: 1, endpoints: ['detail'], gone: ['list'], tokenOutage: true });
    expect(faults.decide('accept').fault.kind).toBe('none');
    expect(faults.decide('detail').fault.kind).toBe('error');
    expect(faults.decide('list').fault.kind).toBe('gone');
    expect(faults.decide('token').fault.kind).toBe('token_outage');
  });

  it('adds slowness to a share of calls', () => {
    const faults = injector();
    faults.set({ slowMs: 50, slowRate: 0.5 });
    const slow = Array.from({ length: 200 }, () => faults.decide('list').slowMs).filter(
      (ms) => ms === 50,
    );
    expect(slow.length).toBeGreaterThan(60);
    expect(slow.length).toBeLessThan(140);
  });
});
