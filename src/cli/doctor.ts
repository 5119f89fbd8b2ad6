import { formatDoctor, runDoctor } from '../ops/doctor.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';

/** `transport-sync doctor`: checks the setup end to end and says what to fix. */
export const doctorCommand: Command = {
  name: 'doctor',
  summary:
    'Check the configuration, file modes, the database, the service and the clock; say what to fix',
  usage: `Usage: transport-sync doctor [--json] [--db PATH]

Checks, in order: the configuration, as run validates it; that the secret files (client
secret, database password, TLS key) are not readable by others; the webhook receiver's key and
TLS files, read as run reads them; how data will come in (fails with polling off and no
receiver, warns of polling alone, which the service retired on 2026-08-12);
the database files' modes (0600); that the database exists, is migrated to this version and
is writable by this user; a token from the token endpoint; one list call (the last hour);
the clock against the service's Date header (warns beyond 60 s). Changes nothing.
Prints each check with ok, warn, FAIL or skip, and under each warning or failure what to do.
Run it as the user the daemon runs as.
Exit codes: 0 nothing failed (warnings allowed), 1 a check failed, 2 bad usage.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...DB_FLAG, json: { type: 'boolean' } });
    const results = await runDoctor({ env: io.env, dbPath: values.db });
    io.stdout.write(values.json ? `${JSON.stringify(results, null, 2)}\n` : formatDoctor(results));
    return results.some((result) => result.status === 'fail') ? EXIT.failure : EXIT.ok;
  },
};
