import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { openSqliteDatabase } from './driver.js';
import './pin.js';
import { TransportError } from '../../errors.js';
import { requireDatabaseFile } from '../open.js';
import { databaseError, isSqliteError } from './errors.js';
import { appliedMigrations, openSqlite } from './open.js';

/** What a backup wrote. */
export interface BackupResult {
  path: string;
  bytes: number;
  schemaVersion: number;
}

/**
 * Writes a consistent copy of the database at `sourcePath` to `targetPath` while the daemon may
 * be writing it. VACUUM INTO reads inside one read transaction, so the copy is one moment's
 * snapshot; under WAL that read neither blocks the daemon's writes nor waits for them (unlike the
 * online backup API, which restarts whenever another connection writes mid-copy). The copy is
 * written to a private temporary file (mode 0600: it holds patient data) beside the target,
 * checked with quick_check, synced, and only then moved into place, so a failed or interrupted
 * backup never leaves a half-written file under the target's name. An existing target is
 * replaced only with `force`. Restore: stop the daemon, copy the file over TRANSPORT_DB (removing
 * any -wal and -shm beside it), start the daemon.
 */
export async function backupSqlite({
  sourcePath,
  targetPath,
  force = false,
}: {
  sourcePath: string;
  targetPath: string;
  force?: boolean;
}): Promise<BackupResult> {
  if (resolve(sourcePath) === resolve(targetPath)) {
    throw new TransportError({
      code: 'backup.same_file',
      message: 'the backup file is the database itself',
      hint: 'Give a path outside the database: `transport-sync backup /var/backups/transport-sync.db`.',
    });
  }
  if (!force && existsSync(targetPath)) throw targetExists(targetPath);
  if (!existsSync(dirname(resolve(targetPath)))) {
    throw new TransportError({
      code: 'backup.no_directory',
      message: `the directory of ${targetPath} does not exist`,
      hint: 'Create it first, or choose another path.',
    });
  }
  const temp = join(dirname(resolve(targetPath)), `.${basename(targetPath)}.${process.pid}.tmp`);
  requireDatabaseFile(sourcePath);
  const source = await openSqlite({ path: sourcePath, isReadOnly: true, shouldMigrate: false });
  try {
    try {
      // An empty file of our making: SQLite writes into it and keeps its mode.
      closeSync(openSync(temp, 'wx', 0o600));
      source.sqlite.prepare('VACUUM INTO ?').run(temp);
    } catch (error) {
      throw copyError(error, sourcePath, targetPath);
    }
    const schemaVersion = verifyCopy(temp);
    const fd = openSync(temp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (force) renameSync(temp, targetPath);
    else placeWithoutOverwriting(temp, targetPath);
    return { path: targetPath, bytes: statSync(targetPath).size, schemaVersion };
  } finally {
    await source.close();
    rmSync(temp, { force: true });
  }
}

/**
 * A failed copy as a coded error: a damaged source is the database's fault; a read-only or full
 * target folder (the usual case) is the backup's.
 */
function copyError(error: unknown, sourcePath: string, targetPath: string): unknown {
  const isSourceDamaged = isSqliteError(error) && /^SQLITE_(CORRUPT|NOTADB)/.test(error.code);
  return isSourceDamaged
    ? databaseError(error, sourcePath)
    : databaseError(error, targetPath, { noun: 'the backup' });
}

/** quick_check the copy and return its schema version (migrations applied). */
function verifyCopy(path: string): number {
  const copy = openSqliteDatabase(path, { readonly: true, fileMustExist: true });
  try {
    const result = copy.pragma('quick_check', { simple: true });
    if (result !== 'ok') {
      throw new TransportError({
        code: 'backup.corrupt',
        message: `the backup copy failed its integrity check: ${String(result)}`,
        hint: 'Run `sqlite3 "$TRANSPORT_DB" "PRAGMA integrity_check"` on the database itself.',
      });
    }
    return appliedMigrations(copy).count;
  } finally {
    copy.close();
  }
}

/** link(2) fails if the target exists, so a file created meanwhile is never overwritten. */
function placeWithoutOverwriting(temp: string, target: string): void {
  try {
    linkSync(temp, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw targetExists(target);
    // File systems without hard links: the existence check above is then the only guard.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV') renameSync(temp, target);
    else throw error;
  }
}

function targetExists(path: string): TransportError {
  return new TransportError({
    code: 'backup.exists',
    message: `${path} already exists; not overwritten`,
    hint: 'Choose a new file name, or pass --force to replace it.',
  });
}
