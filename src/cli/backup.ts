import { loadConfig } from '../config/index.js';
import { backupDatabase } from '../ops/backup.js';
import { DB_FLAG, EXIT, parseCommandArgs, usageError, type Command } from './command.js';

/** `transport-sync backup <file>`: a consistent copy of the database, safe while the daemon runs. */
export const backupCommand: Command = {
  name: 'backup',
  summary: 'Write a consistent copy of the database (safe while the daemon runs)',
  usage: `Usage: transport-sync backup <file> [--force] [--db PATH]

Copies the database (TRANSPORT_DB) to <file> with VACUUM INTO: one consistent snapshot, taken
without stopping the daemon or blocking its writes. The file is created with mode 0600 (it
holds patient data), checked with quick_check, and never overwrites an existing file unless
--force is given.
Restore: stop the daemon, copy the file over TRANSPORT_DB, delete any -wal and -shm files
beside it, start the daemon.
Exit codes: 0 written and checked, 1 failed (the file exists and no --force, no such directory,
the file is the database itself, the copy failed its check, or the database failed), 2 bad usage
or configuration, or a mirror on PostgreSQL (pg_dump backs it up; the hint shows how).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, force: { type: 'boolean' } },
      { allowPositionals: true },
    );
    if (positionals.length !== 1) throw usageError('backup takes exactly one file name');
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const result = await backupDatabase({
      sourcePath: config.dbPath,
      targetPath: positionals[0]!,
      force: values.force ?? false,
    });
    io.stdout.write(
      `backup written: ${result.path} (${result.bytes} bytes, schema version ${result.schemaVersion}, integrity ok)\n`,
    );
    return EXIT.ok;
  },
};
