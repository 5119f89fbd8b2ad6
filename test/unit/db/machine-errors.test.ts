import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { reportError } from '../../../src/cli/output.js';
import { machineError } from '../../../src/db/machine-errors.js';
import { TransportError } from '../../../src/errors.js';

/** A CliIo that keeps what is written to stderr. */
function capture(env: NodeJS.ProcessEnv = {}) {
  let stderr = '';
  const io = {
    stdout: { write: () => true },
    stderr: { write: (text: string) => ((stderr += text), true) },
    env,
  } as never;
  return { io, stderr: () => stderr };
}

describe('failures of the machine that reach the command line untranslated', () => {
  it('a SqliteError is printed as an error with a hint, exit 1, no stack', () => {
    const out = capture();
    const error = new Database.SqliteError(
      'attempt to write a readonly database',
      'SQLITE_READONLY',
    );
    expect(reportError(error, out.io)).toBe(1);
    expect(out.stderr()).toBe(
      'transport-sync: error: cannot write the database: SQLite opened it read-only (attempt to write a readonly database)\n' +
        '  hint: Check that the file, its -wal and -shm files and their folder are writable by the user that runs transport-sync, and that the file system is mounted read-write.\n',
    );
  });

  it('a file-system error names its file; a PostgreSQL server error its code', () => {
    const full = Object.assign(new Error("ENOSPC: no space left on device, write '/x/f'"), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
      path: '/x/f',
    });
    expect(machineError(full)?.code).toBe('db.full');
    expect(machineError(full)?.message).toMatch(/^cannot write the file \/x\/f: /);
    // A refused open may have been a read: left to the place that knows, or reported as a bug.
    const refused = Object.assign(new Error("EACCES: permission denied, open '/x/f'"), {
      code: 'EACCES',
      errno: -13,
      syscall: 'open',
      path: '/x/f',
    });
    expect(machineError(refused)).toBeUndefined();
    expect(machineError(Object.assign(refused, { syscall: 'mkdir' }))?.code).toBe('db.read_only');
    const auth = Object.assign(new Error('password authentication failed for user "m"'), {
      code: '28P01',
      severity: 'FATAL',
    });
    expect(machineError(auth)?.code).toBe('db.auth_failed');
  });

  it('a bug stays a bug: "unexpected error" with its stack, to be reported', () => {
    const out = capture();
    expect(machineError(new TypeError('x is undefined'))).toBeUndefined();
    expect(reportError(new TypeError('x is undefined'), out.io)).toBe(1);
    expect(out.stderr()).toMatch(
      /^transport-sync: unexpected error: TypeError: x is undefined\n\s+at /,
    );
  });

  it('at LOG_LEVEL=debug or trace, a coded error also prints its code and stacks', () => {
    const cause = new Database.SqliteError('database disk image is malformed', 'SQLITE_CORRUPT');
    const error = new TransportError({
      code: 'db.corrupt',
      message: 'damaged',
      hint: 'restore',
      cause,
    });
    for (const level of ['debug', 'TRACE']) {
      const out = capture({ LOG_LEVEL: level });
      expect(reportError(error, out.io)).toBe(1);
      const lines = out.stderr().split('\n');
      expect(lines.slice(0, 4)).toEqual([
        'transport-sync: error: damaged',
        '  hint: restore',
        '  code: db.corrupt',
        'TransportError: damaged',
      ]);
      expect(out.stderr()).toMatch(/^caused by: SqliteError: database disk image is malformed$/m);
      expect(out.stderr()).toMatch(/^\s+at /m);
    }
    const quiet = capture({ LOG_LEVEL: 'info' });
    reportError(error, quiet.io);
    expect(quiet.stderr()).toBe('transport-sync: error: damaged\n  hint: restore\n');
  });
});
