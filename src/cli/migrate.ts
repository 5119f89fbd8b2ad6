import { loadConfig } from '../config/index.js';
import { knownSchemaVersion, openDatabase, schemaVersion, targetOf } from '../db/open.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';

/** `transport-sync migrate`: applies pending migrations and reports the schema version. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Create or upgrade the schema, then exit (the daemon also does this at start)',
  usage: `Usage: transport-sync migrate [--db PATH]

Applies the migrations this version ships to the database (TRANSPORT_DB). The daemon does
the same at start; run this before an upgrade's first start to see the result separately. It is
the one command that creates a SQLite database's folder: the others refuse a path whose folder
does not exist (a mistyped TRANSPORT_DB), with exit 2.
Exit codes: 0 the schema is up to date, 1 the database could not be opened or migrated (a newer
version's schema, permissions, a full disk, a server out of reach), 2 bad usage or configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, DB_FLAG);
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    // The one command that starts a mirror in a new folder (the others refuse a missing one).
    const db = await openDatabase({ ...targetOf(config), mayCreateFolder: true });
    try {
      const version = await schemaVersion(db);
      io.stdout.write(
        `${db.location}: schema version ${version} of ${knownSchemaVersion(db)}, up to date\n`,
      );
    } finally {
      await db.close();
    }
    return EXIT.ok;
  },
};
