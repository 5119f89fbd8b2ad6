import { TransportError } from '../errors.js';

/**
 * A command's worker thread that reached its heap's cap (the backfill's, the copy's): a coded
 * error, `cli.out_of_memory`, that says what to do, instead of Node's own with its stack. Any
 * other error is returned as it is.
 */
export function outOfMemory(error: unknown, { task, hint }: { task: string; hint: string }) {
  if ((error as { code?: unknown } | undefined)?.code !== 'ERR_WORKER_OUT_OF_MEMORY') return error;
  return new TransportError({
    code: 'cli.out_of_memory',
    message: `${task} ran out of its heap`,
    hint,
    cause: error,
  });
}
