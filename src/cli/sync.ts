import { redactConfig } from '../config/index.js';
import { ONE_SHOT_CONNECTIONS } from '../db/open.js';
import { createSyncContext } from '../daemon/context.js';
import { runPollCycle } from '../sync/poll.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';
import { setupCommand } from './setup.js';

/** `transport-sync sync`: one poll cycle, then exit. */
export const syncCommand: Command = {
  name: 'sync',
  summary: 'One poll cycle, then exit (for cron or a systemd timer)',
  usage: `Usage: transport-sync sync [--db PATH]

Lists the requests in the poll window, fetches the details of those that changed, stores them,
and prints the cycle's counts. Logs go to stderr, the summary to stdout.
Exit codes: 0 the cycle completed, 1 it failed or left requests to retry, 2 bad configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, DB_FLAG);
    const { config, log } = setupCommand(io, { needsService: true, dbPath: values.db });
    log.info({ config: redactConfig(config) }, 'sync starting');
    const context = await createSyncContext({
      config,
      log,
      maxConnections: ONE_SHOT_CONNECTIONS,
    });
    try {
      const result = await runPollCycle(context.pollDeps);
      const { counts } = result;
      io.stdout.write(
        `sync ${result.status}: ${counts.requestsSeen} seen, ${counts.requestsNew} new, ${counts.requestsChanged} changed, ` +
          `${counts.requestsUnavailable} unavailable, ${counts.requestsFailed} failed, ${counts.requestsQuarantined} quarantined; ` +
          `${counts.listCalls} list and ${counts.detailCalls} detail calls\n`,
      );
      if (result.error) io.stdout.write(`errors: ${result.error}\n`);
      return result.status === 'ok' ? EXIT.ok : EXIT.failure;
    } finally {
      await context.close();
    }
  },
};
