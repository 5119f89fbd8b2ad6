import { existsSync } from 'node:fs';
import { knownMigrations, openDatabase, schemaVersion, type MirrorDb } from '../db/open.js';
import { TransportError } from '../errors.js';

/**
 * Throws `db.missing` when no database file exists at `path`. The operator tools (status, backup,
 * prune, doctor) must not create an empty database where they expected the daemon's: that would
 * hide a wrong TRANSPORT_DB behind an empty, "stale" mirror.
 */
export function requireDatabaseFile(path: string): void {
  if (path !== ':memory:' && existsSync(path)) return;
  throw new TransportError({
    code: 'db.missing',
    message: `no database at ${path}`,
    hint: 'Check TRANSPORT_DB (or --db); `transport-sync migrate` creates the database, and the daemon (`transport-sync run`) creates and fills it.',
  });
}

/** Opens an existing database read-only: no migration, no pragma that writes, no mode change. */
export function openForReading(path: string): MirrorDb {
  requireDatabaseFile(path);
  return openDatabase({ path, isReadOnly: true, shouldMigrate: false });
}

/**
 * Opens an existing database for writing without migrating it, and refuses one whose schema is
 * behind this version's: pruning or repairing half-migrated tables could go wrong silently.
 */
export function openMigratedForWriting(path: string): MirrorDb {
  requireDatabaseFile(path);
  const db = openDatabase({ path, shouldMigrate: false });
  const applied = schemaVersion(db.sqlite);
  const known = knownMigrations().length;
  if (applied < known) {
    db.close();
    throw new TransportError({
      code: 'db.not_migrated',
      message: `the database ${path} has schema version ${applied}; this version needs ${known}`,
      hint: 'Run `transport-sync migrate` (the daemon also migrates at start), then try again.',
    });
  }
  return db;
}
