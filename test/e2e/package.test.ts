import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseEnvFile } from '../../src/config/index.js';
import {
  cleanEnv,
  freePort,
  processTracker,
  serviceEnv,
  startSimulatorProcess,
  type CliResult,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

// The package as users get it: `npm pack` in the repository, `npm install -g` of the tarball into
// a temporary prefix, and the installed `transport-sync` run as a process from outside the
// repository. Any failure of npm fails these tests; nothing here is skipped.
//
// The install runs without scripts, and the installed better-sqlite3 gets the checkout's addon,
// already built for the Node running the tests: `npm ci` (or `npm install`) has just compiled it
// from source through the same install script a user's `npm install -g` runs, and compiling it a
// second time here took three or four minutes of a worker beside the rest of the suite.
// Everything else about the installed package is checked as a user gets it. To exercise the
// compile at install as well, set TRANSPORT_TEST_PACKAGE_ADDON=compile.

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const INSTALL_TIMEOUT_MS = 5 * 60_000;
const REUSES_CHECKOUT_ADDON = process.env.TRANSPORT_TEST_PACKAGE_ADDON !== 'compile';
const ADDON_BUILD = 'node_modules/better-sqlite3/build';
/** Where the units and the README expect `npm install -g --prefix /usr/local` to put the package. */
const SYSTEM_PREFIX = '/usr/local';

/** PATH with the Node running these tests first, so npm, node-gyp and the CLI's shebang use it. */
function pathWithThisNode(): string {
  return [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
}

/**
 * The environment for npm: the machine's npm configuration, cache and registry (and
 * npm_config_nodedir, if set, for node-gyp), but none of the prefix settings `npm test` exports,
 * so that --prefix alone decides where the package goes.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const env = cleanEnv({ PATH: pathWithThisNode() });
  for (const key of Object.keys(env)) {
    const lower = key.toLowerCase();
    if (
      lower === 'npm_config_prefix' ||
      lower === 'npm_config_global' ||
      lower === 'npm_config_local_prefix' ||
      lower === 'npm_config_global_prefix' ||
      lower.startsWith('npm_package_') ||
      lower.startsWith('npm_lifecycle_')
    )
      delete env[key];
  }
  return env;
}

/** Runs a command to completion; kills it and says so after `timeoutMs`. */
function run(
  command: string,
  args: string[],
  { env, cwd, timeoutMs = 60_000 }: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Fails with the command's whole output unless it exited 0. */
function mustSucceed(what: string, result: CliResult): CliResult {
  if (result.code !== 0) {
    throw new Error(
      `${what} exited ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return result;
}

interface Packed {
  filename: string;
  size: number;
  entryCount: number;
  files: { path: string }[];
}

const processes = processTracker();
afterEach(() => processes.stopAll());

let work: string;
let packed: Packed;
let tarball: string;
let prefix: string;
let installed: string;
let installedBin: string;
/** Why packing or installing failed: every test then fails with it, none is skipped. */
let setupError: unknown;

beforeAll(async () => {
  try {
    await packAndInstall();
  } catch (error) {
    setupError = error;
  }
}, INSTALL_TIMEOUT_MS + 60_000);

/** Throws the packing or installing failure, so that each test reports it as its own. */
function packedAndInstalled(): void {
  if (setupError !== undefined) throw setupError;
}

async function packAndInstall(): Promise<void> {
  if (!existsSync(join(REPO, 'dist/cli/bin.js'))) {
    throw new Error('dist/cli/bin.js is missing: run `npm run build` (npm test does) first');
  }
  work = tempDir('transport-sync-package-');
  prefix = join(work, 'prefix');
  // --ignore-scripts: `prepare` would rebuild dist/ under the other test files' running CLIs;
  // `npm test` has just built it.
  const pack = mustSucceed(
    'npm pack',
    await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      env: npmEnv(),
      cwd: REPO,
    }),
  );
  [packed] = JSON.parse(pack.stdout) as [Packed];
  tarball = join(work, packed.filename);
  const started = Date.now();
  mustSucceed(
    'npm install -g of the tarball',
    await run(
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        // npm 11 asks for install scripts to be allowed by name; better-sqlite3 compiles its addon.
        ...(REUSES_CHECKOUT_ADDON ? ['--ignore-scripts'] : ['--allow-scripts=better-sqlite3']),
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        tarball,
      ],
      { env: npmEnv(), cwd: work, timeoutMs: INSTALL_TIMEOUT_MS },
    ),
  );
  installed = join(prefix, 'lib/node_modules', PACKAGE.name);
  if (REUSES_CHECKOUT_ADDON) {
    cpSync(join(REPO, ADDON_BUILD), join(installed, ADDON_BUILD), { recursive: true });
  }
  console.log(
    `package test: ${packed.filename}, ${packed.size} bytes, ${packed.entryCount} files; ` +
      `npm install -g took ${Math.round((Date.now() - started) / 1000)} s` +
      (REUSES_CHECKOUT_ADDON ? ", with the checkout's better-sqlite3 addon" : ''),
  );
  installedBin = join(prefix, 'bin', 'transport-sync');
}

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * Runs `sql` on the database at `path`, read-only, through better-sqlite3 as the installed package
 * has it (its JavaScript from the install, its addon built for the Node running these tests). It
 * runs in a process of its own: a second copy of the addon loaded into this worker beside the
 * checkout's crashed the worker on Node 24.
 */
async function queryInstalled<T>(path: string, sql: string): Promise<T[]> {
  const script = `const Database = require(require.resolve('better-sqlite3', { paths: [process.argv[1]] }));
const db = new Database(process.argv[2], { readonly: true });
process.stdout.write(JSON.stringify(db.prepare(process.argv[3]).all()));
db.close();`;
  const result = mustSucceed(
    'reading the database through the installed better-sqlite3',
    await run(process.execPath, ['-e', script, installed, path, sql], {
      env: cleanEnv(),
      cwd: work,
    }),
  );
  return JSON.parse(result.stdout) as T[];
}

/** Runs the installed `transport-sync` through its bin link, from outside the repository. */
function runInstalled(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return run(installedBin, args, { env: { ...env, PATH: pathWithThisNode() }, cwd: work });
}

describe('the package built by npm pack', () => {
  it('is one tarball holding the CLI, the migrations, the systemd units and the README, and no sources', () => {
    packedAndInstalled();
    expect(existsSync(tarball)).toBe(true);
    expect(packed.filename).toBe(`${PACKAGE.name}-${PACKAGE.version}.tgz`);
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/cli/bin.js',
        'drizzle/sqlite/meta/_journal.json',
        'drizzle/postgres/meta/_journal.json',
        'systemd/transport-sync.service',
        'systemd/transport-sync-sync.service',
        'systemd/transport-sync-sync.timer',
        'systemd/transport-sync.env.example',
        'systemd/transport-sync.sysusers',
        'monitoring/alerts.yml',
        'monitoring/alerts.test.yml',
        'monitoring/grafana-dashboard.json',
      ]),
    );
    for (const engine of ['sqlite', 'postgres']) {
      const migrations = readdirSql(join(REPO, 'drizzle', engine));
      expect(migrations.length).toBeGreaterThan(0);
      for (const migration of migrations) expect(paths).toContain(`drizzle/${engine}/${migration}`);
    }
    expect(paths.filter((path) => /^(src|test|bench|node_modules|\.cache)\//.test(path))).toEqual(
      [],
    );
  });
});

describe('transport-sync installed with npm install -g from the tarball', () => {
  it('is on the PATH of the prefix and prints its commands with --help', async () => {
    packedAndInstalled();
    expect(realpathSync(installedBin)).toBe(realpathSync(join(installed, 'dist/cli/bin.js')));
    const help = await runInstalled(['--help'], cleanEnv());
    expect(help.code, help.stderr).toBe(0);
    for (const command of ['run', 'sync', 'migrate', 'status', 'doctor', 'backup']) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\s`, 'm'));
    }
    const version = await runInstalled(['version'], cleanEnv());
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toContain(PACKAGE.version);
  });

  it('carries its migrations and systemd units, at the path the units name', () => {
    packedAndInstalled();
    for (const engine of ['sqlite', 'postgres']) {
      expect(existsSync(join(installed, 'drizzle', engine, 'meta/_journal.json'))).toBe(true);
      expect(readdirSql(join(installed, 'drizzle', engine))).toEqual(
        readdirSql(join(REPO, 'drizzle', engine)),
      );
    }
    for (const unit of ['transport-sync.service', 'transport-sync-sync.service']) {
      const text = readFileSync(join(installed, 'systemd', unit), 'utf8');
      const execStart = text.match(/^ExecStart=(\S+) \w+$/m);
      expect(execStart, `${unit} has an ExecStart naming the command`).not.toBeNull();
      const command = execStart![1]!;
      expect(command.startsWith(`${SYSTEM_PREFIX}/`), `${unit}: ${command}`).toBe(true);
      // The same layout under the test's prefix as under /usr/local: the command npm links.
      const here = join(prefix, command.slice(SYSTEM_PREFIX.length));
      expect(existsSync(here), `${unit} names ${command}`).toBe(true);
      expect(realpathSync(here)).toBe(realpathSync(join(installed, 'dist/cli/bin.js')));
    }
  });

  it('creates the schema from its own migrations with migrate', async () => {
    packedAndInstalled();
    const dbPath = join(tempDir(), 'mirror.db');
    const migrate = await runInstalled(['migrate', '--db', dbPath], cleanEnv());
    expect(migrate.code, migrate.stderr).toBe(0);
    const tables = (
      await queryInstalled<{ name: string }>(
        dbPath,
        "SELECT name FROM sqlite_master WHERE type = 'table'",
      )
    ).map((row) => row.name);
    const [{ n: applied }] = (await queryInstalled<{ n: number }>(
      dbPath,
      'SELECT count(*) AS n FROM __drizzle_migrations',
    )) as [{ n: number }];
    expect(tables).toEqual(
      expect.arrayContaining(['requests', 'request_locations', 'sync_state', 'sync_runs']),
    );
    expect(applied).toBe(readdirSql(join(REPO, 'drizzle', 'sqlite')).length);
  });

  it('mirrors the service with one sync', async () => {
    packedAndInstalled();
    const sim = processes.track(await startSimulatorProcess(['--requests', '40']));
    const dbPath = join(tempDir(), 'mirror.db');
    const sync = await runInstalled(['sync'], serviceEnv(sim.url, { TRANSPORT_DB: dbPath }));
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^sync ok: \d+ seen, \d+ new/);
    const [{ n }] = (await queryInstalled<{ n: number }>(
      dbPath,
      'SELECT count(*) AS n FROM requests',
    )) as [{ n: number }];
    expect(n).toBeGreaterThan(0);
  });
});

/** The migration files (*.sql) in a drizzle folder, sorted. */
function readdirSql(folder: string): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .sort();
}

/*
 * The install walk-through of docs/operations.md ("Installing under systemd"), as far as a
 * container allows: no systemd runs here (it is not PID 1), so a scratch folder stands for the
 * server's /, the daemon is started the way the unit starts it (as its user, in its working
 * directory, with the environment file's settings in its environment, TRANSPORT_ENV_FILE= and
 * the credentials in a folder named by CREDENTIALS_DIRECTORY, as LoadCredential= makes it), and
 * commands typed at a shell name the environment file with TRANSPORT_ENV_FILE instead of finding
 * it at /etc/transport-sync. The daemon's user is created with useradd when the test runs as
 * root (systemd-sysusers makes it on a server; systemd-units.test.ts checks that file), else
 * everything runs as the test's own user.
 */

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const isRoot = process.getuid?.() === 0;

/** A program of the system's, by name, or undefined. */
function systemTool(name: string): string | undefined {
  return SYSTEM_PATH.split(':')
    .map((folder) => join(folder, name))
    .find((path) => existsSync(path));
}

/** The daemon's user, made for the test and deleted after it. */
interface DaemonUser {
  name: string;
  uid: number;
  gid: number;
}

let daemonUser: DaemonUser | undefined;
/** Why the walk-through runs as the test's own user, when it does. */
const sameUserReason = !isRoot
  ? 'not root: no user can be created, everything runs as the test user'
  : !systemTool('useradd') || !systemTool('runuser') || !systemTool('setpriv')
    ? 'useradd, runuser or setpriv missing: everything runs as root'
    : undefined;

/** The scratch / of the walk-through, removed after it. */
let serverRoot: string | undefined;

afterAll(async () => {
  if (serverRoot) rmSync(serverRoot, { recursive: true, force: true });
  if (daemonUser) {
    await run(systemTool('userdel')!, [daemonUser.name], { env: cleanEnv(), cwd: '/' });
  }
});

async function createDaemonUser(home: string): Promise<DaemonUser> {
  const name = `tsync-${process.pid}`;
  mustSucceed(
    'useradd',
    await run(
      systemTool('useradd')!,
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        home,
        '--shell',
        '/usr/sbin/nologin',
        name,
      ],
      { env: cleanEnv(), cwd: '/' },
    ),
  );
  const id = async (flag: string) =>
    Number(mustSucceed('id', await run('id', [flag, name], { env: cleanEnv(), cwd: '/' })).stdout);
  daemonUser = { name, uid: await id('-u'), gid: await id('-g') };
  return daemonUser;
}

/** `value` in an environment file line, quoted when it holds a space. */
const envValue = (value: string) => (/\s/.test(value) ? `"${value}"` : value);

/** The example, edited as an operator edits it: each setting's line replaced, or added. */
function editEnvFile(text: string, settings: Record<string, string>): string {
  let edited = text;
  for (const [name, value] of Object.entries(settings)) {
    const line = `${name}=${envValue(value)}`;
    const active = new RegExp(`^${name}=.*$`, 'm');
    edited = active.test(edited) ? edited.replace(active, line) : `${edited}${line}\n`;
  }
  return edited;
}

/** A process left running (the daemon), with its output so far. */
function startInstalled(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const waitFor = (pattern: RegExp) =>
    vi.waitUntil(
      () => {
        if (child.exitCode !== null)
          throw new Error(`exited ${child.exitCode}: ${stdout}${stderr}`);
        return pattern.test(stdout);
      },
      { timeout: 20_000, interval: 50 },
    );
  return { child, exited, waitFor, output: () => ({ stdout, stderr }) };
}

describe('the install walk-through of docs/operations.md', () => {
  it('installs, sets up a receiver from the example, migrates, passes doctor, runs, and status sees what the daemon sees, as its user', async () => {
    packedAndInstalled();
    if (sameUserReason) console.log(`install walk-through: ${sameUserReason}`);
    // The scratch /: the package's prefix must be reachable by the daemon's user too.
    chmodSync(work, 0o755);
    const root = (serverRoot = tempDir('transport-sync-server-'));
    chmodSync(root, 0o755);
    const etc = join(root, 'etc/transport-sync');
    const state = join(root, 'var/lib/transport-sync');
    const credentials = join(root, 'run/credentials/transport-sync.service');
    for (const folder of ['etc', 'var/lib', 'run/credentials']) {
      mkdirSync(join(root, folder), { recursive: true, mode: 0o755 });
    }
    // 1. the command (npm install -g above, in beforeAll), and the user it runs as.
    const user = sameUserReason ? undefined : await createDaemonUser(state);
    const chownToUser = (path: string) => user && chownSync(path, user.uid, user.gid);

    // The service as it runs today: v1.0 polling retired, signed webhooks to the receiver.
    const port = await freePort();
    const downloadedKey = join(root, 'service-public-key.pem');
    const sim = processes.track(
      await startSimulatorProcess([
        '--requests',
        '30',
        '--retire-v1',
        '--mutate-every',
        '300',
        '--mutate-per-tick',
        '2',
        '--webhook-url',
        `http://127.0.0.1:${port}/webhooks/`,
        '--webhook-public-key-file',
        downloadedKey,
      ]),
    );

    // 2. the settings: the example, installed 0640 for the daemon's group, then edited.
    mkdirSync(etc, { mode: 0o750 });
    const envFile = join(etc, 'transport-sync.env');
    copyFileSync(join(installed, 'systemd/transport-sync.env.example'), envFile);
    chmodSync(envFile, 0o640);
    if (user) {
      chownSync(etc, 0, user.gid);
      chownSync(envFile, 0, user.gid);
    }
    const dbPath = join(state, 'transport-sync.db');
    writeFileSync(
      envFile,
      editEnvFile(readFileSync(envFile, 'utf8'), {
        TRANSPORT_AUTH_URL: sim.url,
        TRANSPORT_HUB_URL: sim.url,
        TRANSPORT_BASE_URL: sim.url,
        TRANSPORT_CLIENT_ID: 'demo-client',
        TRANSPORT_DB: dbPath,
        TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      }),
    );

    // 3. the secrets: root's files, and the copies LoadCredential= hands the daemon.
    writeFileSync(join(etc, 'client_secret'), 'demo-secret\n', { mode: 0o600 });
    copyFileSync(downloadedKey, join(etc, 'webhook_public_key.pem'));
    mkdirSync(credentials, { mode: 0o700 });
    for (const [name, file] of [
      ['client_secret', 'client_secret'],
      ['webhook_public_key', 'webhook_public_key.pem'],
    ] as const) {
      copyFileSync(join(etc, file), join(credentials, name));
      chmodSync(join(credentials, name), 0o400);
      chownToUser(join(credentials, name));
    }
    chownToUser(credentials);

    // A command typed at a shell: the daemon's user (runuser), the environment file, nothing else.
    const shellEnv = { PATH: pathWithThisNode(), TRANSPORT_ENV_FILE: envFile };
    const asDaemonUser = (args: string[], extra: Record<string, string> = {}) =>
      user
        ? run(systemTool('runuser')!, ['-u', user.name, '--', installedBin, ...args], {
            env: { ...shellEnv, ...extra },
            cwd: '/',
          })
        : run(installedBin, args, { env: { ...shellEnv, ...extra }, cwd: root });

    // 4. the database, in the state folder the daemon's user owns.
    mkdirSync(state, { mode: 0o700 });
    chownToUser(state);
    const migrate = await asDaemonUser(['migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain(dbPath);
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
    if (user) expect(statSync(dbPath).uid).toBe(user.uid);

    // 5. doctor, as the daemon's user with its credentials (the systemd-run recipe's outcome).
    const doctor = await asDaemonUser(['doctor'], { CREDENTIALS_DIRECTORY: credentials });
    expect(doctor.stdout).not.toMatch(/^FAIL/m);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toMatch(/^ok {4}webhook receiver: its key read$/m);

    // 6. the daemon, as the unit starts it: settings from systemd, not from the file.
    const settings = parseEnvFile(readFileSync(envFile, 'utf8'));
    expect(settings.problems).toEqual([]);
    const unitEnv = {
      ...settings.values,
      PATH: pathWithThisNode(),
      TRANSPORT_ENV_FILE: '',
      CREDENTIALS_DIRECTORY: credentials,
    };
    const setpriv = user
      ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', '--', installedBin]
      : [];
    const daemon = startInstalled(
      user ? systemTool('setpriv')! : installedBin,
      [...setpriv, 'run'],
      unitEnv,
      state,
    );
    try {
      await daemon.waitFor(/"msg":"webhook receiver listening"/);
      const delivered = async () =>
        (
          (await (await fetch(`${sim.url}/_sim/webhooks/`)).json()) as {
            stats: { delivered: number };
          }
        ).stats.delivered;
      await vi.waitUntil(async () => (await delivered()) >= 5, { timeout: 30_000, interval: 100 });

      // status, from a shell, as the daemon's user: the daemon's mode and settings.
      const status = await asDaemonUser(['status', '--json']);
      expect(status.stderr).toBe('');
      const report = JSON.parse(status.stdout) as Record<string, unknown>;
      expect(report).toMatchObject({
        database_path: dbPath,
        mode: 'webhooks-only',
        has_intake: true,
        settings_source: 'daemon',
      });
      expect((report.webhook_events as { received: number }).received).toBeGreaterThan(0);
      expect(status.code, JSON.stringify(report.problems)).toBe(0);
      // Without the file (a shell with nothing set but the database): still the daemon's view.
      const bare = await asDaemonUser(['status', '--json', '--db', dbPath], {
        TRANSPORT_ENV_FILE: '',
      });
      expect(JSON.parse(bare.stdout)).toMatchObject({
        mode: 'webhooks-only',
        settings_source: 'daemon',
      });
    } finally {
      daemon.child.kill('SIGTERM');
    }
    const stopped = await daemon.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    // Nothing the commands or the daemon wrote belongs to anyone but the daemon's user.
    if (user) {
      for (const name of readdirSync(state)) {
        expect(statSync(join(state, name)).uid, name).toBe(user.uid);
      }
    }

    // A user who may not read the environment file is told whom to run as; nothing runs.
    if (user) {
      const stranger = await run(
        systemTool('runuser')!,
        ['-u', 'nobody', '--', installedBin, 'status'],
        { env: shellEnv, cwd: '/' },
      );
      expect(stranger.code).toBe(2);
      expect(stranger.stderr).toMatch(
        /^transport-sync: error: cannot read the environment file .* permission denied \(EACCES\)\n {2}hint: .*runuser -u transport-sync -- transport-sync/,
      );
    }
  }, 120_000);
});
