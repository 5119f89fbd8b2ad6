import { describe, expect, it } from 'vitest';
import { BACKFILL_HEAP, backfillHeap, workerFailure } from '../../../src/cli/backfill-job.js';
import { TransportError } from '../../../src/errors.js';

describe("the backfill worker's own failures", () => {
  it('turns a worker out of its heap into a coded error that says how to resume', () => {
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit'), {
      code: 'ERR_WORKER_OUT_OF_MEMORY',
    });
    const error = workerFailure(oom);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({
      code: 'cli.out_of_memory',
      message: 'the backfill ran out of its heap',
    });
    expect((error as TransportError).hint).toMatch(/Run the same command again/);
  });

  it('passes any other failure on as it is', () => {
    const other = Object.assign(new Error('Cannot find module'), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(workerFailure(other)).toBe(other);
  });
});

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
