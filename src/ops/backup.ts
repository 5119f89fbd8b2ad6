import { backupSqlite, type BackupResult } from '../db/sqlite/backup.js';

export type { BackupResult };

/**
 * A consistent copy of the mirror, taken while the daemon may be writing it (see
 * db/sqlite/backup.ts for how, and docs/operations.md for restoring).
 */
export function backupDatabase(options: {
  sourcePath: string;
  targetPath: string;
  force?: boolean;
}): Promise<BackupResult> {
  return backupSqlite(options);
}
