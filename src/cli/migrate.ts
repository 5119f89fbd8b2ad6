import { loadConfig } from '../config/index.js';
import { knownSchemaVersion, openDatabase, schemaVersion, targetOf } from '../db/open.js';
import { DB_FLAG, EXIT, parseCommandArgs, type Command } from './command.js';

/** `transport-sync migrate`: applies pending migrations and reports the schema version. */
export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Create or upgrade the database schema, then exit',
  usage: `Usage: transport-sync migrate [--db PATH]

Applies the migrations this version ships to the database (TRANSPORT_DB). The daemon does
the same at start; run this before an upgrade's first start to see the result separately.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, DB_FLAG);
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const db = await openDatabase(targetOf(config));
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
