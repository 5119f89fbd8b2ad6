/**
 * The simulator's only source of randomness: a seeded PRNG (mulberry32), so one seed always gives
 * the same data, the same mutations and the same fault decisions. Never `Math.random` here.
 */

/** A seeded random stream with the helpers the generator, mutation driver and faults need. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Whole number in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** One key chosen in proportion to its weight; weights must sum above zero. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T;
  /** `count` distinct elements (fewer when the list is shorter), in random order. */
  sample<T>(items: readonly T[], count: number): T[];
  /** Upper-case letters and digits, e.g. request ids `K3J9QX2A`. */
  alnum(length: number): string;
  /** A UUID v4-shaped string. */
  uuid(): string;
  /** An independent stream derived from this one's seed and `salt`, so streams do not interfere. */
  fork(salt: number): Random;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';

/** A mulberry32 stream; the same `seed` yields the same sequence. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[int(0, items.length - 1)] as T;
  };
  const chars = (alphabet: string, length: number): string => {
    let out = '';
    for (let i = 0; i < length; i += 1) out += alphabet[int(0, alphabet.length - 1)];
    return out;
  };
  return {
    next,
    int,
    pick,
    chance: (p) => next() < p,
    weighted: <T>(entries: readonly (readonly [T, number])[]): T => {
      const total = entries.reduce((sum, [, weight]) => sum + Math.max(0, weight), 0);
      let roll = next() * total;
      for (const [value, weight] of entries) {
        roll -= Math.max(0, weight);
        if (roll < 0) return value;
      }
      const last = entries[entries.length - 1];
      if (!last) throw new Error('weighted pick from an empty list');
      return last[0];
    },
    sample: <T>(items: readonly T[], count: number): T[] => {
      const pool = [...items];
      for (let i = pool.length - 1; i > 0; i -= 1) {
        const j = int(0, i);
        [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
      }
      return pool.slice(0, Math.max(0, count));
    },
    alnum: (length) => chars(ALNUM, length),
    uuid: () => {
      const h = chars(HEX, 32);
      const variant = HEX[8 + int(0, 3)] ?? '8';
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20)}`;
    },
    // Mixing with a fixed odd constant keeps forks of nearby seeds far apart.
    fork: (salt) => createRandom((Math.imul(seed ^ salt, 0x9e3779b1) + salt) >>> 0),
  };
}
