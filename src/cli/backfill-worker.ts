import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { createSyncContext } from '../daemon/context.js';
import { postOutcome, type WorkerOrder } from '../db/worker-thread.js';
import { createLogger } from '../log.js';
import { runBackfill } from '../sync/backfill.js';
import type { BackfillJob, BackfillMessage } from './backfill-job.js';

/*
 * The worker thread backfillInWorker (backfill-job.ts) starts: opens the mirror and the client,
 * runs the backfill, and reports to the main thread: its log lines, its progress, its result.
 * Errors cross as data (src/db/worker-thread.ts). An abort from the main thread stops the
 * backfill as a signal did in the main thread: the windows started run to their end, the run is
 * recorded as aborted.
 */

const port = parentPort!;
const post = (message: BackfillMessage) => port.postMessage(message);
const job = workerData as BackfillJob;
const controller = new AbortController();
const onOrder = (order: WorkerOrder) => {
  if (order.type === 'abort') controller.abort(new Error('interrupted'));
};
port.on('message', onOrder);

/**
 * The log's destination: each line to the main thread, which writes it where its own log goes.
 * A stream, as pino-pretty wants for a terminal, that says whether the main thread's is one.
 */
function linesToMain(isTTY: boolean): Writable {
  const lines = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      post({ type: 'log', text: String(chunk) });
      done();
    },
  });
  return Object.assign(lines, { isTTY });
}

try {
  await postOutcome(port, async () => {
    const { config } = job;
    const log = createLogger({
      level: config.logLevel,
      destination: linesToMain(job.isLogTerminal),
    });
    const context = await createSyncContext({ config, log });
    try {
      return await runBackfill(
        {
          client: context.client,
          store: context.store,
          clock: context.clock,
          log: context.log.child({ area: 'backfill' }),
          calls: context.calls,
          concurrency: config.concurrency,
        },
        job.plan,
        {
          restart: job.restart,
          signal: controller.signal,
          onProgress: (progress) => post({ type: 'progress', progress }),
        },
      );
    } finally {
      await context.close();
    }
  });
} finally {
  // Nothing holds the thread open then: it ends, and the main thread hears of it.
  port.off('message', onOrder);
}
