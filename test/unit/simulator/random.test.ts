import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/simulator/random.js';

const draw = (seed: number, n = 20) => {
  const rng = createRandom(seed);
  return Array.from({ length: n }, () => rng.next());
};

describe('simulator seeded random', () => {
  it('repeats a sequence for a seed and differs between seeds', () => {
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(42).every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('int stays within inclusive bounds and reaches both ends', () => {
    const rng = createRandom(1);
    const seen = new Set(Array.from({ length: 500 }, () => rng.int(3, 6)));
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
  });

  it('weighted never picks a zero weight and follows the weights roughly', () => {
    const rng = createRandom(2);
    const picks = Array.from({ length: 2000 }, () =>
      rng.weighted([
        ['a', 3],
        ['b', 1],
        ['c', 0],
      ] as const),
    );
    expect(picks).not.toContain('c');
    const a = picks.filter((p) => p === 'a').length;
    expect(a / picks.length).toBeGreaterThan(0.7);
    expect(a / picks.length).toBeLessThan(0.8);
  });

  it('makes ids and uuids of the right shape', () => {
    const rng = createRandom(3);
    expect(rng.alnum(8)).toMatch(/^[A-Z0-9]{8}$/);
    expect(rng.uuid()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('sample returns distinct elements; pick refuses an empty list', () => {
    const rng = createRandom(4);
    const sample = rng.sample([1, 2, 3, 4, 5], 3);
    expect(new Set(sample).size).toBe(3);
    expect(rng.sample([1, 2], 5)).toHaveLength(2);
    expect(() => rng.pick([])).toThrow();
  });

  it('forks are independent of how much the parent has drawn', () => {
    const a = createRandom(5);
    const b = createRandom(5);
    b.next();
    b.next();
    expect(a.fork(7).next()).toBe(b.fork(7).next());
    expect(a.fork(7).next()).not.toBe(a.fork(8).next());
  });
});
