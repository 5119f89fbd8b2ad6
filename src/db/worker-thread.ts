import { Worker, type ResourceLimits } from 'node:worker_threads';
import { TransportError, type TransportErrorOptions } from '../errors.js';
import { machineError } from './machine-errors.js';

/*
 * A job in a worker thread (the copy's, the backfill's): the run, and its errors across the
 * thread's boundary. A message carries data, not an Error. A coded error crosses whole, with its
 * code and hint, and a machine's failure (a full disk, a lost server) is coded first as it would
 * be in the main thread; anything else crosses as its message and stack.
 */

/** An error as a worker reports it. */
export type FailureReport =
  | { kind: 'coded'; options: Omit<TransportErrorOptions, 'cause'> }
  | { kind: 'unexpected'; message: string; stack: string | undefined };

/** What a worker posts for `error`. */
function reportOf(error: unknown): FailureReport {
  const known = error instanceof TransportError ? error : machineError(error);
  if (known) {
    const { code, message, hint, isRetryable, details } = known;
    return {
      kind: 'coded',
      options: { code, message, isRetryable, details, ...(hint !== undefined && { hint }) },
    };
  }
  const unexpected = error instanceof Error ? error : new Error(String(error));
  return { kind: 'unexpected', message: unexpected.message, stack: unexpected.stack };
}

/** The error a report stands for, to be thrown again in the main thread. */
export function errorOf(report: FailureReport): Error {
  if (report.kind === 'coded') return new TransportError(report.options);
  const error = new Error(report.message);
  if (report.stack) error.stack = report.stack;
  return error;
}

/** What every job's worker posts last: its result, or why it failed. */
export type WorkerOutcome<Result> =
  { type: 'done'; result: Result } | { type: 'failed'; error: FailureReport };

/**
 * The worker's side of runInWorker: runs `work` and posts its outcome to the main thread on
 * `port`, its result or the report of its error. The only place a worker makes one.
 */
export async function postOutcome<Result>(
  port: { postMessage(message: WorkerOutcome<Result>): void },
  work: () => Promise<Result>,
): Promise<void> {
  let outcome: WorkerOutcome<Result>;
  try {
    outcome = { type: 'done', result: await work() };
  } catch (error) {
    outcome = { type: 'failed', error: reportOf(error) };
  }
  port.postMessage(outcome);
}

function isOutcome<Result>(message: { type: string }): message is WorkerOutcome<Result> {
  return message.type === 'done' || message.type === 'failed';
}

/** What the main thread posts to a worker that takes an order: stop, as a signal would. */
export type WorkerOrder = { type: 'abort' };

/**
 * Runs `url` in a worker thread and resolves with the result it posts last (`done`), or rejects
 * with the error it reports (`failed`), thrown again here, or with the thread's own failure (out
 * of its heap, a module that did not load: `ERR_WORKER_OUT_OF_MEMORY` and the like, as Node gives
 * it). Its other messages go to `onMessage`, in order. `env` becomes the worker's process.env
 * (PGPASSFILE and the like); `signal` aborting posts the worker an abort (WorkerOrder). `name`
 * says whose worker, in the error for a thread that ended without a word.
 */
export function runInWorker<Result, Message extends { type: string }>({
  url,
  workerData,
  env,
  resourceLimits,
  signal,
  onMessage,
  name,
}: {
  url: URL;
  workerData: unknown;
  env: NodeJS.ProcessEnv;
  resourceLimits?: ResourceLimits;
  signal?: AbortSignal;
  onMessage: (message: Message) => void;
  name: string;
}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, {
      workerData,
      env: { ...env },
      ...(resourceLimits && { resourceLimits }),
    });
    const abort = () => worker.postMessage({ type: 'abort' } satisfies WorkerOrder);
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
    let outcome: { result: Result } | { error: Error } | undefined;
    worker.on('message', (message: Message | WorkerOutcome<Result>) => {
      if (!isOutcome(message)) onMessage(message);
      else if (message.type === 'done') outcome = { result: message.result };
      else outcome = { error: errorOf(message.error) };
    });
    // The thread's own failure: it ends with it.
    worker.on('error', (error) => (outcome ??= { error }));
    worker.on('exit', (code) => {
      signal?.removeEventListener('abort', abort);
      if (outcome && 'result' in outcome) resolve(outcome.result);
      else reject(outcome?.error ?? new Error(`${name}'s worker stopped (exit code ${code})`));
    });
  });
}
