import { parseBackfillArgs } from './backfill-args.js';
import { backfillInWorker } from './backfill-job.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';
import { createProgressReporter, formatDuration } from './progress.js';
import { setupCommand } from './setup.js';

/** `transport-sync backfill`: a one-shot, resumable import of history. */
export const backfillCommand: Command = {
  name: 'backfill',
  summary: 'Import history between two dates, resumably',
  usage: `Usage: transport-sync backfill --from DATE|TIME --to DATE|TIME [--states LIST] [--chunk-hours N] [--restart] [--db PATH]

Reads every request whose event time lies in the range from the service's full list, window by
window (--chunk-hours, default 24, bounds each response; half of TRANSPORT_CONCURRENCY windows
at once), and stores it in the mirror's tables. A date as --to means the end of that day.
--states defaults to awaiting,accepted,completed,canceled.

Each finished window is checkpointed in the database: run the same command again after a crash
and it imports the windows it had not finished. --restart ignores the checkpoints.
Safe to run while the daemon runs on the same database.
Exit codes: 0 done, 1 failed or left requests to retry, 2 bad arguments (no call is made).`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...DB_FLAG,
      from: { type: 'string' },
      to: { type: 'string' },
      states: { type: 'string' },
      'chunk-hours': { type: 'string' },
      restart: { type: 'boolean', default: false },
    });
    const plan = parseBackfillArgs({
      from: values.from,
      to: values.to,
      states: values.states,
      chunkHours: values['chunk-hours'],
    });
    const { config, log } = setupCommand(io, { needsService: true, dbPath: values.db });
    const progress = createProgressReporter({ stream: io.stderr, log });
    const controller = new AbortController();
    const onSignal = () => controller.abort(new Error('interrupted'));
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      // In a worker thread with a capped heap (backfill-job.ts): its log lines come back here.
      const result = await backfillInWorker({
        job: {
          config,
          plan,
          restart: values.restart,
          isLogTerminal: (io.stderr as { isTTY?: boolean }).isTTY === true,
        },
        env: io.env,
        signal: controller.signal,
        onLog: (text) => io.stderr.write(text),
        onProgress: (update) => progress.update(update),
      });
      progress.finish();
      const { counts } = result;
      io.stdout.write(
        `backfill ${result.status}: ${result.windowsDone}/${result.windowsTotal} windows (${result.windowsSkipped} done before), ` +
          `${counts.requestsNew} new, ${counts.requestsChanged} updated, ${counts.requestsUnchanged} unchanged, ` +
          `${counts.requestsQuarantined} quarantined, ${counts.requestsFailed} failed; ` +
          `${counts.listCalls} list and ${counts.detailCalls} detail calls, ${counts.retries} retries; ${formatDuration(result.elapsedMs)}\n`,
      );
      if (result.error)
        io.stderr.write(
          `transport-sync: error: ${result.error}\n  hint: run the same command again to resume after the last finished window.\n`,
        );
      return result.status === 'ok' ? EXIT.ok : EXIT.failure;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
