import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  processTracker,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type CliResult,
  type RunningCli,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';
import { loadEmbeddedPostgres } from '../setup/embedded-postgres.js';

/*
 * Failures the machine causes, met by the built CLI as an operator meets them: a read-only file
 * or folder, a full disk, a damaged file or one that is no database, a PostgreSQL server that is
 * not there, refuses the role or has no such database. Each ends with exit 1, one
 * `transport-sync: error:` line and one `hint:` line, no stack trace, and what was committed
 * before is still there.
 *
 * The conditions are real: as root (who writes through file modes) a read-only file is a
 * read-only bind mount of it, a read-only folder and a full disk are small tmpfs mounts; as
 * another user, file modes do. A test the machine cannot set up says why and is skipped.
 */

const processes = processTracker();
afterEach(() => processes.stopAll());

const isRoot = process.getuid?.() === 0;
/** Mount points and immutable files to undo, last first. */
const cleanups: (() => void)[] = [];
/** Why tmpfs cannot be mounted here; undefined when it can. */
let noMount: string | undefined;

/** Runs a system tool; its complaint when it fails, undefined when it works. */
function system(command: string, args: string[]): string | undefined {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) return result.error.message;
  return result.status === 0 ? undefined : result.stderr.trim() || `exit ${result.status}`;
}

/** Mounts and remembers to unmount (lazily, should a process still hold a file there). */
function mount(args: string[], target: string): string | undefined {
  const failure = system('mount', [...args, target]);
  if (failure === undefined) {
    cleanups.push(() => {
      if (system('umount', [target]) !== undefined) system('umount', ['-l', target]);
    });
  }
  return failure;
}

/** A fresh folder with a tmpfs of `size` on it. */
function tmpfsFolder(size: string): string {
  const dir = tempDir('transport-sync-mount-');
  const failure = mount(['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs'], dir);
  if (failure !== undefined) throw new Error(`mount tmpfs: ${failure}`);
  return dir;
}

let sim: RunningCli & { url: string };
/** A mirror filled by a real sync, copied for each test; and how many requests it holds. */
let template: string;
let templateRequests: number;

beforeAll(async () => {
  if (!isRoot) noMount = 'not root';
  else {
    const probe = tempDir();
    noMount = system('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]);
    if (noMount === undefined) system('umount', [probe]);
  }
  sim = await startSimulatorProcess(['--requests', '20']);
  template = join(tempDir(), 'mirror.db');
  const synced = await runTracked(['sync'], env(template));
  expect(synced.code, synced.stderr).toBe(0);
  templateRequests = requestCount(template);
  expect(templateRequests).toBeGreaterThan(0);
});

afterAll(async () => {
  for (const undo of cleanups.splice(0).reverse()) undo();
  if (sim && sim.child.exitCode === null) sim.child.kill('SIGKILL');
  await sim?.exited;
});

/** The service is the simulator; logs below warnings are off, so stderr holds only the error. */
function env(db: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return serviceEnv(sim.url, { TRANSPORT_DB: db, LOG_LEVEL: 'warn', ...extra });
}

/** Runs the CLI to its end; a process that does not end is killed after the test. */
function runTracked(args: string[], environment: NodeJS.ProcessEnv): Promise<CliResult> {
  return processes.track(startCli(args, environment)).exited;
}

/** A copy of the template mirror in `dir`. */
function copyMirror(dir: string): string {
  const path = join(dir, 'mirror.db');
  copyFileSync(template, path);
  if (existsSync(`${template}-wal`)) copyFileSync(`${template}-wal`, `${path}-wal`);
  return path;
}

/** The requests a mirror holds, read as another program would. */
function requestCount(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Exit 1, `transport-sync: error: <message>`, a hint, and nothing else: no stack trace. */
function expectPlainError(result: CliResult, message: RegExp): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(/^transport-sync: error: /);
  expect(result.stderr).not.toMatch(/^ {4}at /m);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(message);
  expect(lines[1]).toMatch(/^ {2}hint: \S/);
  expect(lines, result.stderr).toHaveLength(2);
}

const day = (offsetDays: number) =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** Every command that writes the mirror. */
const WRITERS = [
  ['sync'],
  ['run'],
  ['prune'],
  ['gaps', '--ack'],
  ['backfill', '--from', day(-1), '--to', day(1)],
];

/**
 * Makes `file` read-only for the CLI: a read-only bind mount of it as root (chattr +i where
 * mounts are not allowed), mode 0444 as another user. Returns why it cannot, if so.
 */
function makeReadOnly(file: string): string | undefined {
  if (!isRoot) {
    chmodSync(file, 0o444);
    return undefined;
  }
  const bind = mount(['--bind'], file) ?? system('mount', ['-o', 'remount,bind,ro', file]);
  if (bind === undefined) return undefined;
  const immutable = system('chattr', ['+i', file]);
  if (immutable === undefined) {
    cleanups.push(() => system('chattr', ['-i', file]));
    return undefined;
  }
  return `as root, neither a read-only bind mount (${bind}) nor chattr +i (${immutable}) works here`;
}

describe('a read-only database file', () => {
  let path: string;
  let cannot: string | undefined;
  beforeAll(() => {
    path = copyMirror(tempDir());
    cannot = makeReadOnly(path);
  });

  it.for(WRITERS)('%s says it is read-only, and the mirror is as it was', async (args, context) => {
    context.skip(cannot !== undefined, cannot);
    const result = await runTracked(args, env(path));
    expectPlainError(
      result,
      /^transport-sync: error: cannot (open|write) the database .+: the file (is on a read-only file system|may not be changed by this user|is not writable by this user)/,
    );
    expect(requestCount(path)).toBe(templateRequests);
  });

  it('migrate of a database that needs its tables says so too', async (context) => {
    const empty = join(tempDir(), 'empty.db');
    writeFileSync(empty, '');
    const reason = makeReadOnly(empty);
    context.skip(reason !== undefined, reason);
    const result = await runTracked(['migrate'], env(empty));
    expectPlainError(
      result,
      /^transport-sync: error: cannot (open|write) the database .+: the file /,
    );
    expect(readFileSync(empty)).toHaveLength(0);
  });
});

describe('a read-only folder', () => {
  let folder: string;
  let cannot: string | undefined;
  beforeAll(() => {
    if (isRoot && noMount !== undefined) {
      cannot = `as root, file modes do not stop writes and tmpfs cannot be mounted (${noMount})`;
      return;
    }
    folder = isRoot ? tmpfsFolder('8m') : tempDir();
    copyMirror(folder);
    if (isRoot) {
      const failure = system('mount', ['-o', 'remount,ro', folder]);
      if (failure !== undefined) cannot = `remount ro: ${failure}`;
    } else {
      chmodSync(folder, 0o555);
      cleanups.push(() => chmodSync(folder, 0o700));
    }
  });
  afterAll(() => {
    if (cannot !== undefined) return;
    // Writable again, the mirror reads as it was before.
    if (isRoot) expect(system('mount', ['-o', 'remount,rw', folder])).toBeUndefined();
    else chmodSync(folder, 0o700);
    expect(requestCount(join(folder, 'mirror.db'))).toBe(templateRequests);
  });

  const READ_ONLY = '(is on a read-only file system|is not writable by this user)';

  it.for(['status', 'sync'])('%s says so', async (command, context) => {
    context.skip(cannot !== undefined, cannot);
    const path = join(folder, 'mirror.db');
    const result = await runTracked([command], env(path));
    expectPlainError(
      result,
      new RegExp(
        `^transport-sync: error: cannot (open|write) the database ${path}: (the file|its folder ${folder}) ${READ_ONLY}`,
      ),
    );
  });

  it('migrate of a new database there names the folder, creating nothing', async (context) => {
    context.skip(cannot !== undefined, cannot);
    const path = join(folder, 'new.db');
    const result = await runTracked(['migrate'], env(path));
    expectPlainError(
      result,
      new RegExp(
        `^transport-sync: error: cannot (open|write) the database ${path}: its folder ${folder} ${READ_ONLY}`,
      ),
    );
    expect(existsSync(path)).toBe(false);
  });
});

describe('a full disk', () => {
  it('sync and status say the disk is full; with room again, sync resumes on the same mirror', async (context) => {
    context.skip(
      noMount !== undefined,
      `a full disk needs a small tmpfs, and mount is not permitted here (${noMount})`,
    );
    const folder = tmpfsFolder('2m');
    const path = copyMirror(folder);
    const filler = join(folder, 'filler');
    fillUp(filler);
    for (const command of ['sync', 'status']) {
      const result = await runTracked([command], env(path));
      expectPlainError(
        result,
        new RegExp(
          `^transport-sync: error: cannot (open|write) the database ${path}: the disk holding ${folder} is full \\((disk I/O error|database or disk is full)\\)$`,
        ),
      );
      expect(result.stderr).toMatch(
        new RegExp(`hint: Free space on that file system \\(\`df -h ${folder}\`\\)`),
      );
    }
    unlinkSync(filler);
    expect(requestCount(path)).toBe(templateRequests);
    const resumed = await runTracked(['sync'], env(path));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(requestCount(path)).toBeGreaterThanOrEqual(templateRequests);
  });
});

/** Writes zeros into `file` until the file system has no room left. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // The last partial block, byte by byte, so that not even a page is left.
  const tail = openSync(file, 'a');
  try {
    for (;;) writeSync(tail, Buffer.alloc(512));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(tail);
  }
}

describe('a damaged file', () => {
  /** The mirror with its schema page (after the 100-byte header) overwritten. */
  function damagedMirror(): string {
    const path = copyMirror(tempDir());
    const fd = openSync(path, 'r+');
    try {
      writeSync(fd, Buffer.alloc(3996, 'garbage '), 0, 3996, 100);
    } finally {
      closeSync(fd);
    }
    return path;
  }

  it('sync, status and backup say it is damaged and how to restore, leaving it untouched', async () => {
    const path = damagedMirror();
    const before = readFileSync(path);
    for (const args of [['sync'], ['status'], ['backup', join(tempDir(), 'copy.db')]]) {
      const result = await runTracked(args, env(path));
      expectPlainError(
        result,
        new RegExp(
          `^transport-sync: error: the database ${path} is damaged \\(database disk image is malformed\\)$`,
        ),
      );
      expect(result.stderr).toMatch(/hint: Stop the daemon, restore the latest backup/);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('at LOG_LEVEL=debug the code and the stack trace follow, for a report', async () => {
    const result = await runTracked(['status'], env(damagedMirror(), { LOG_LEVEL: 'debug' }));
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(/^transport-sync: error: the database .+ is damaged/);
    expect(lines[1]).toMatch(/^ {2}hint: /);
    expect(lines[2]).toBe('  code: db.corrupt');
    expect(result.stderr).toMatch(/^caused by: SqliteError: database disk image is malformed$/m);
    expect(result.stderr).toMatch(/^ {4}at /m);
  });
});

describe('a file that is not a database', () => {
  it('sync and status say so and point at TRANSPORT_DB, leaving the file as it was', async () => {
    const path = join(tempDir(), 'notes.txt');
    writeFileSync(path, 'TRANSPORT_DB=/var/lib/transport-sync/mirror.db\n');
    for (const command of ['sync', 'status']) {
      const result = await runTracked([command], env(path));
      expectPlainError(
        result,
        new RegExp(
          `^transport-sync: error: the database ${path} is not an SQLite database, or its header is damaged \\(file is not a database\\)$`,
        ),
      );
      expect(result.stderr).toMatch(
        /hint: Check that TRANSPORT_DB \(or --db\) names the mirror's database file/,
      );
    }
    expect(readFileSync(path, 'utf8')).toBe('TRANSPORT_DB=/var/lib/transport-sync/mirror.db\n');
  });
});

describe('PostgreSQL', () => {
  it('a server that is not there: cannot be reached, for sync and status', async () => {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/mirror`;
    for (const command of ['sync', 'status']) {
      const result = await runTracked([command], env(url));
      expectPlainError(
        result,
        new RegExp(
          `^transport-sync: error: the database server ${url} cannot be reached \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)$`,
        ),
      );
      expect(result.stderr).toMatch(/hint: Check that PostgreSQL runs and answers at TRANSPORT_DB/);
    }
  });

  /*
   * The machine's server trusts every connection from 127.0.0.1, so a refused password needs a
   * server of its own that asks for one: the embedded-postgres package's, with scram-sha-256.
   */
  describe('a server that asks for a password', () => {
    let folder: string;
    let server: { stop(): Promise<void> } | undefined;
    let url: string;
    let passwordFiles: { right: string; wrong: string };

    beforeAll(async () => {
      folder = mkdtempSync(join(tmpdir(), 'transport-sync-pg-auth-'));
      // As root, the server runs as a user of its own, which must reach this folder.
      if (isRoot) chmodSync(folder, 0o755);
      const EmbeddedPostgres = await loadEmbeddedPostgres({ dir: folder });
      const port = await freePort();
      const started = new EmbeddedPostgres({
        databaseDir: join(folder, 'data'),
        user: 'postgres',
        password: 'the-right-password',
        authMethod: 'scram-sha-256',
        port,
        persistent: false,
        createPostgresUser: isRoot,
        onLog: () => undefined,
      });
      await started.initialise();
      await started.start();
      server = started;
      url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      const secrets = tempDir();
      passwordFiles = { right: join(secrets, 'right'), wrong: join(secrets, 'wrong') };
      writeFileSync(passwordFiles.right, 'the-right-password\n', { mode: 0o600 });
      writeFileSync(passwordFiles.wrong, 'a-wrong-password\n', { mode: 0o600 });
      // The mirror, migrated with the right password: the password file reaches the server.
      const migrated = await runTracked(
        ['migrate'],
        env(url, { TRANSPORT_DB_PASSWORD_FILE: passwordFiles.right }),
      );
      expect(migrated.code, migrated.stderr).toBe(0);
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      rmSync(folder, { recursive: true, force: true });
    }, 60_000);

    it('a wrong password or none: the server refused the role, and the mirror stays', async () => {
      const wrong = await runTracked(
        ['sync'],
        env(url, { TRANSPORT_DB_PASSWORD_FILE: passwordFiles.wrong }),
      );
      expectPlainError(
        wrong,
        new RegExp(
          `^transport-sync: error: the database server ${url} refused the role \\(password authentication failed for user "postgres"\\)$`,
        ),
      );
      expect(wrong.stderr).toMatch(/hint: .*TRANSPORT_DB_PASSWORD_FILE.*pg_hba\.conf/);
      const none = await runTracked(['status'], env(url));
      expectPlainError(
        none,
        new RegExp(
          `^transport-sync: error: the database server ${url} asks for a password and none was given`,
        ),
      );
      const again = await runTracked(
        ['migrate'],
        env(url, { TRANSPORT_DB_PASSWORD_FILE: passwordFiles.right }),
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/schema version (\d+) of \1, up to date/);
    });

    it('a database the server does not have: no database there, and how to create one', async () => {
      // The machine's own server when the tests name one, else this one (with its password).
      const given = process.env.TRANSPORT_TEST_DATABASE_URL?.trim();
      const base = new URL(given || url);
      base.pathname = '/does_not_exist_xyz';
      const missing = base.toString();
      const extra: Record<string, string> = given
        ? {}
        : { TRANSPORT_DB_PASSWORD_FILE: passwordFiles.right };
      for (const command of ['sync', 'status']) {
        const result = await runTracked([command], env(missing, extra));
        expectPlainError(
          result,
          new RegExp(
            `^transport-sync: error: no database at ${missing.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}: the server has no such database \\(database "does_not_exist_xyz" does not exist\\)$`,
          ),
        );
        expect(result.stderr).toMatch(/hint: .*createdb/);
      }
    });
  });
});
