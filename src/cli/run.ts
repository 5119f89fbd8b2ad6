import { handleSignals, startDaemon } from '../daemon/lifecycle.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';
import { setupCommand } from './setup.js';
import { packageVersion } from './version.js';

/** `transport-sync run`: the daemon. */
export const runCommand: Command = {
  name: 'run',
  summary:
    'The daemon: polls on TRANSPORT_POLL_CRON, receives webhooks, drains the outbox and serves /metrics, as configured, until SIGTERM or SIGINT',
  usage: `Usage: transport-sync run [--db PATH]

Opens and migrates the database, runs a poll cycle at once and then on TRANSPORT_POLL_CRON,
never two at once. Logs are JSON lines on stdout (journald). SIGTERM or SIGINT stops it
gracefully (exit 0); a second signal ends it at once.
Exit codes: 0 stopped (SIGTERM or SIGINT, or another daemon took over the database), 1 it could
not start (the database, the service, a listen address) or was ended at once (a second signal,
or a graceful stop past 10 s), 2 bad usage or configuration (webhook key and TLS files included).`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, DB_FLAG);
    const { config, log } = setupCommand(io, {
      needsService: true,
      dbPath: values.db,
      logTo: 'stdout',
    });
    const starting = startDaemon({ config, log, version: packageVersion() });
    // Signals are handled from the first moment, start-up included (see handleSignals).
    const release = handleSignals(starting, log);
    try {
      await (
        await starting
      ).stopped;
    } finally {
      release();
    }
    return EXIT.ok;
  },
};
