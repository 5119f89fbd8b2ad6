import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TransportError } from '../errors.js';

/*
 * What the file system says when a database file cannot be created, opened or written. SQLite
 * reports such failures vaguely ("unable to open database file", "disk I/O error"), so the file,
 * the files SQLite keeps beside it (-wal, -shm) and their folder are looked at to name the cause.
 */

/** Why a file or folder cannot be written, and which one. */
export type FileProblem =
  | { kind: 'read_only'; at: string; reason: 'EROFS' | 'EACCES' | 'EPERM' }
  | { kind: 'full'; at: string; reason: 'ENOSPC' | 'EDQUOT' }
  | { kind: 'unreadable'; at: string };

/**
 * Below this many free bytes a file system counts as full: SQLite needs room for pages, its
 * write-ahead log and a 32 KiB shared-memory file.
 */
const FULL_BELOW_BYTES = 1024 * 1024;

const READ_ONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);

/** A Node.js system error (`code` like EACCES, and usually the `path` it was about). */
export function isErrnoError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).errno === 'number'
  );
}

/**
 * The first reason the database at `path` cannot be written: the file, its -wal or -shm, or the
 * folder they live in is read-only for this process, or the file system has no room left.
 * Undefined when none is found.
 */
export function findWriteProblem(path: string): FileProblem | undefined {
  const folder = dirname(resolve(path));
  for (const at of [path, `${path}-wal`, `${path}-shm`, folder]) {
    const reason = accessFailure(at, constants.W_OK);
    if (reason && READ_ONLY_CODES.has(reason)) {
      return { kind: 'read_only', at, reason: reason as 'EROFS' | 'EACCES' | 'EPERM' };
    }
  }
  const availableBytes = freeBytes(folder);
  if (availableBytes !== undefined && availableBytes < FULL_BELOW_BYTES) {
    return { kind: 'full', at: folder, reason: 'ENOSPC' };
  }
  return undefined;
}

/** Whether this user may not read the file at `path` (or search its folder). */
export function findReadProblem(path: string): FileProblem | undefined {
  const folder = dirname(resolve(path));
  if (accessFailure(folder, constants.X_OK)) return { kind: 'unreadable', at: folder };
  if (accessFailure(path, constants.R_OK)) return { kind: 'unreadable', at: path };
  return undefined;
}

/** The errno code of access(2) on an existing `path`, or undefined when it is allowed or absent. */
function accessFailure(path: string, mode: number): string | undefined {
  if (!existsSync(path)) return undefined;
  try {
    accessSync(path, mode);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EACCES';
  }
}

/** Bytes this user may still write on the file system holding `folder` (root may use the reserve). */
function freeBytes(folder: string): number | undefined {
  try {
    const stats = statfsSync(folder);
    const blocks = process.getuid?.() === 0 ? stats.bfree : stats.bavail;
    return blocks * stats.bsize;
  } catch {
    return undefined;
  }
}

/** What is being written, for messages: `the database /var/lib/x.db`. */
export interface FileSubject {
  /** The file the operator knows (TRANSPORT_DB, a backup's target). */
  path: string;
  /** What it is, with its article: `the database`, `the backup`. */
  noun: string;
  /** What was being done: `write` (the default) or `open`. */
  verb?: 'write' | 'open' | undefined;
}

/** "the file" or "its folder /x", for the part of the database a problem is about. */
function partOf(problem: FileProblem, path: string): string {
  if (resolve(problem.at) === resolve(path)) return 'the file';
  if (resolve(problem.at) === dirname(resolve(path))) return `its folder ${problem.at}`;
  return problem.at;
}

/** The noun of the mirror's own database: its messages and hints speak of TRANSPORT_DB. */
export const DATABASE = 'the database';

/** The coded error for a file problem, with what to do about it. */
export function fileProblemError(
  problem: FileProblem,
  subject: FileSubject,
  cause: unknown,
): TransportError {
  const { path, noun, verb = 'write' } = subject;
  const isDatabase = noun === DATABASE;
  const detail = cause instanceof Error ? ` (${cause.message})` : '';
  const part = partOf(problem, path);
  const folder = dirname(resolve(path));
  if (problem.kind === 'full') {
    const isQuota = problem.reason === 'EDQUOT';
    const afterwards = isDatabase
      ? '; nothing committed is lost, and the daemon resumes by itself once there is room.'
      : ', or write to another file system.';
    return new TransportError({
      code: 'db.full',
      message: isQuota
        ? `cannot ${verb} ${noun} ${path}: this user's disk quota is used up${detail}`
        : `cannot ${verb} ${noun} ${path}: the disk holding ${folder} is full${detail}`,
      hint: isQuota
        ? `Free space within this user's quota, or raise the quota${afterwards}`
        : `Free space on that file system (\`df -h ${folder}\`)${afterwards}`,
      cause,
      isRetryable: true,
      details: { at: problem.at, reason: problem.reason },
    });
  }
  if (problem.kind === 'unreadable') {
    return new TransportError({
      code: 'db.open_failed',
      message: `cannot ${verb} ${noun} ${path}: ${part} is not readable by this user (uid ${uid()})${detail}`,
      hint: `Run the command as the user the daemon runs as, or give this user read access to ${problem.at}.`,
      cause,
      details: { at: problem.at },
    });
  }
  const why = {
    EROFS: 'is on a read-only file system',
    EACCES: `is not writable by this user (uid ${uid()})`,
    EPERM: 'may not be changed by this user (another user owns it, or it is immutable)',
  }[problem.reason];
  const elsewhere = isDatabase
    ? "point TRANSPORT_DB at a writable place; under systemd with ProtectSystem=strict the database's folder must be in StateDirectory= or ReadWritePaths="
    : 'choose a writable place';
  const hint = {
    EROFS: `Remount it read-write, or ${elsewhere}.`,
    EACCES: isDatabase
      ? `Give the user that runs transport-sync write access to ${problem.at}, or run the command as the daemon's user.`
      : `Give this user write access to ${problem.at}, or ${elsewhere}.`,
    EPERM: `Check the owner of ${problem.at}${isDatabase ? " (the daemon's user must own the database files)" : ''} and its attributes (\`lsattr\`; \`chattr -i\` clears the immutable flag).`,
  }[problem.reason];
  const besides =
    isDatabase && resolve(problem.at) === folder
      ? ' SQLite creates the -wal and -shm files in that folder, even to read the database.'
      : '';
  return new TransportError({
    code: 'db.read_only',
    message: `cannot ${verb} ${noun} ${path}: ${part} ${why}${detail}`,
    hint: hint + besides,
    cause,
    isRetryable: true,
    details: { at: problem.at, reason: problem.reason },
  });
}

/**
 * A file-system error met while creating or writing `subject` (its folder, the file, a mode
 * change) as a coded error: read-only, full or an I/O failure. Other errors are returned as
 * they are.
 */
export function fileSystemError(error: unknown, subject: FileSubject): unknown {
  if (!isErrnoError(error)) return error;
  const at = nearestExisting(error.path ?? subject.path);
  // A recursive mkdir under a read-only folder may report ENOENT: the folder above says why.
  const reason =
    error.code === 'ENOENT' && error.syscall === 'mkdir'
      ? accessFailure(at, constants.W_OK)
      : error.code;
  if (reason !== undefined && READ_ONLY_CODES.has(reason)) {
    const problem = {
      kind: 'read_only',
      at,
      reason: reason as 'EROFS' | 'EACCES' | 'EPERM',
    } as const;
    return fileProblemError(problem, subject, error);
  }
  if (error.code === 'ENOSPC' || error.code === 'EDQUOT') {
    const problem = { kind: 'full', at, reason: error.code } as const;
    return fileProblemError(problem, subject, error);
  }
  if (error.code === 'EIO') {
    return new TransportError({
      code: 'db.io',
      message: `cannot ${subject.verb ?? 'write'} ${subject.noun} ${subject.path}: the disk reported an I/O error (${error.message})`,
      hint: 'Check the disk and the kernel log (`dmesg`); restore the latest backup if the file is damaged.',
      cause: error,
      isRetryable: true,
    });
  }
  return error;
}

/**
 * `path`, or the closest folder above it that exists: creating a file or folder fails for its
 * parent's sake, and that parent is what the operator must fix.
 */
function nearestExisting(path: string): string {
  let at = resolve(path);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

function uid(): string {
  return String(process.getuid?.() ?? 'unknown');
}
