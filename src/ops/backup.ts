import { isPostgresLocation, postgresLocation } from '../db/location.js';
import { backupSqlite, type BackupResult } from '../db/sqlite/backup.js';
import { TransportError } from '../errors.js';

export type { BackupResult };

/**
 * A consistent copy of the mirror, taken while the daemon may be writing it (see
 * db/sqlite/backup.ts for how, and docs/operations.md for restoring). A PostgreSQL mirror is the
 * server's to back up: its own tools do it better than a copy through one connection would.
 */
export function backupDatabase(options: {
  sourcePath: string;
  targetPath: string;
  force?: boolean;
}): Promise<BackupResult> {
  if (isPostgresLocation(options.sourcePath)) {
    throw new TransportError({
      code: 'backup.postgres',
      message: 'the mirror is on PostgreSQL: back it up with the server’s own tools',
      hint: `pg_dump --format=custom --file=${options.targetPath} '${postgresLocation(options.sourcePath)}' (or the server's continuous archiving); restore with pg_restore. See docs/operations.md.`,
    });
  }
  return backupSqlite(options);
}
