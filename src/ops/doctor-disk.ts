import { existsSync, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isPostgresLocation } from '../db/location.js';
import type { CheckResult } from './doctor.js';

/** Below this, writes fail within minutes at a busy provider's rate: the daemon cannot work. */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** Below this (or the database's own size, if larger), room for a backup or a checkpoint is short. */
export const LOW_FREE_BYTES = 1024 * 1024 * 1024;

/** What the check needs of the file system: free bytes for this user, and a file's size. */
export interface DiskProbe {
  freeBytes(folder: string): number;
  sizeOf(file: string): number;
}

const realDisk: DiskProbe = {
  freeBytes(folder) {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  },
  sizeOf: (file) => (existsSync(file) ? statSync(file).size : 0),
};

/**
 * Free space on the SQLite database's file system. A full disk stops every write (the daemon
 * then refuses deliveries and retries its cycles, losing nothing committed); a backup or
 * `VACUUM` needs about the database's size again. PostgreSQL's disk is the server's: skipped.
 */
export function checkFreeSpace(path: string, disk: DiskProbe = realDisk): CheckResult {
  const name = 'free space';
  if (isPostgresLocation(path)) {
    return { name, status: 'skip', detail: "PostgreSQL: the server's disk" };
  }
  const folder = dirname(resolve(path));
  if (!existsSync(folder)) {
    return { name, status: 'skip', detail: `no folder ${folder} (see the database check)` };
  }
  const free = disk.freeBytes(folder);
  const database = disk.sizeOf(path) + disk.sizeOf(`${path}-wal`);
  const low = Math.max(LOW_FREE_BYTES, database);
  const detail = `${formatMiB(free)} free in ${folder}, database ${formatMiB(database)}`;
  if (free < MIN_FREE_BYTES) {
    return {
      name,
      status: 'fail',
      detail,
      hint: `Free space on that file system (at least ${formatMiB(MIN_FREE_BYTES)}; more than the database's size for backups): writes fail when it is full.`,
    };
  }
  if (free < low) {
    return {
      name,
      status: 'warn',
      detail,
      hint: `Free space on that file system: a backup or VACUUM needs about the database's size again, and the mirror grows (keep at least ${formatMiB(low)} free).`,
    };
  }
  return { name, status: 'ok', detail };
}

function formatMiB(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}
