import { describe, expect, it } from 'vitest';
import { appendBounded, LOG_LIMIT } from '../../../src/simulator/index.js';

describe("the simulator's call and action logs", () => {
  it('keep the newest entries and never pass LOG_LIMIT, however long a demo runs', () => {
    const log: number[] = [];
    for (let i = 0; i < LOG_LIMIT * 3 + 17; i += 1) appendBounded(log, i);
    expect(log.length).toBeLessThanOrEqual(LOG_LIMIT);
    expect(log.length).toBeGreaterThanOrEqual(Math.floor(LOG_LIMIT * 0.9));
    // Oldest first, contiguous, ending with the last entry appended.
    expect(log.at(-1)).toBe(LOG_LIMIT * 3 + 16);
    expect(log.at(-1)! - log[0]!).toBe(log.length - 1);
  });
});
