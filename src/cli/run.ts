import { handleSignals, startDaemon } from '../daemon/lifecycle.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';
import { setupCommand } from './setup.js';
import { packageVersion } from './version.js';

/** `transport-sync run`: the daemon. */
export const runCommand: Command = {
  name: 'run',
  summary: 'Run the daemon: poll on the TRANSPORT_POLL_CRON schedule until stopped',
  usage: `Usage: transport-sync run [--db PATH]

Opens and migrates the database, runs a poll cycle at once and then on TRANSPORT_POLL_CRON,
never two at once. Logs are JSON lines on stdout (journald). SIGTERM or SIGINT stops it
gracefully (exit 0); a second signal ends it at once.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, DB_FLAG);
    const { config, log } = setupCommand(io, {
      needsService: true,
      dbPath: values.db,
      logTo: 'stdout',
    });
    const daemon = await startDaemon({ config, log, version: packageVersion() });
    const release = handleSignals(daemon, log);
    await daemon.stopped;
    release();
    return EXIT.ok;
  },
};
