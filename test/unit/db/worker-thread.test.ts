import { describe, expect, it } from 'vitest';
import { outOfMemory } from '../../../src/cli/out-of-memory.js';
import { runInWorker } from '../../../src/db/worker-thread.js';
import { TransportError } from '../../../src/errors.js';

const WORKER = new URL('../../helpers/job-worker.mjs', import.meta.url);

/** Runs the test worker in `mode`; its messages besides the outcome are collected. */
function run(mode: string, options: { signal?: AbortSignal; heapMb?: number } = {}) {
  const messages: unknown[] = [];
  const result = runInWorker<unknown, { type: string }>({
    url: WORKER,
    workerData: { mode },
    env: {},
    name: 'the test job',
    onMessage: (message) => {
      messages.push(message);
    },
    ...(options.signal && { signal: options.signal }),
    ...(options.heapMb && {
      resourceLimits: { maxOldGenerationSizeMb: options.heapMb, maxYoungGenerationSizeMb: 4 },
    }),
  });
  return { result, messages };
}

describe('a job in a worker thread', () => {
  it('resolves with the result posted last, its other messages passed on in order', async () => {
    const { result, messages } = run('done');
    await expect(result).resolves.toEqual({ rows: 2 });
    expect(messages).toEqual([
      { type: 'progress', step: 1 },
      { type: 'progress', step: 2 },
    ]);
  });

  it('throws a coded error reported by the worker again, code and hint whole', async () => {
    const { result } = run('coded');
    const error = await result.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'copy.target_busy', message: 'busy', hint: 'wait' });
  });

  it('says whose worker ended without a word, and how', async () => {
    await expect(run('silent').result).rejects.toThrow(
      "the test job's worker stopped (exit code 3)",
    );
  });

  it('passes an abort on to the worker, which ends as it chooses', async () => {
    const controller = new AbortController();
    const { result, messages } = run('abortable', { signal: controller.signal });
    await expect.poll(() => messages.length).toBe(1);
    controller.abort();
    await expect(result).resolves.toEqual({ heard: 'abort' });
  });

  it('passes an abort given before the start on as well', async () => {
    const { result } = run('abortable', { signal: AbortSignal.abort() });
    await expect(result).resolves.toEqual({ heard: 'abort' });
  });

  it("gives a worker out of its heap as Node's error, which the commands code", async () => {
    const error = await run('hog', { heapMb: 16 }).result.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'ERR_WORKER_OUT_OF_MEMORY' });
    const coded = outOfMemory(error, { task: 'the copy', hint: 'Run the same command again.' });
    expect(coded).toBeInstanceOf(TransportError);
    expect(coded).toMatchObject({
      code: 'cli.out_of_memory',
      message: 'the copy ran out of its heap',
      hint: 'Run the same command again.',
    });
  });

  it('leaves any other error as it is', () => {
    const other = Object.assign(new Error('Cannot find module'), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(outOfMemory(other, { task: 'the copy', hint: '' })).toBe(other);
  });
});
