import { describe, expect, it } from 'vitest';
import { BACKFILL_HEAP, backfillHeap } from '../../../src/cli/backfill-job.js';

describe("the backfill worker's heap", () => {
  const machineMb = 24 * 1024;
  it('is capped without a memory limit, or under one no smaller than the machine', () => {
    expect(backfillHeap(0, machineMb)).toBe(BACKFILL_HEAP);
    // cgroup v1 without a limit reports about 2^63 bytes.
    expect(backfillHeap(2 ** 43, machineMb)).toBe(BACKFILL_HEAP);
  });

  it("is left to V8 under a limit that sizes it smaller (the units' MemoryMax=1G)", () => {
    expect(backfillHeap(1024, machineMb)).toBeUndefined();
    expect(backfillHeap(512, machineMb)).toBeUndefined();
  });

  it('is capped under a limit that would size it larger', () => {
    expect(backfillHeap(4096, machineMb)).toBe(BACKFILL_HEAP);
  });
});
