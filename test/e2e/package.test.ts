import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
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
      const execStart = text.match(/^ExecStart=\S+(?: --\S+)* (\S+) \w+$/m);
      expect(execStart, `${unit} has an ExecStart naming the CLI`).not.toBeNull();
      const script = execStart![1]!;
      expect(script.startsWith(`${SYSTEM_PREFIX}/`), `${unit}: ${script}`).toBe(true);
      // The same layout under the test's prefix as under /usr/local.
      const here = join(prefix, script.slice(SYSTEM_PREFIX.length));
      expect(existsSync(here), `${unit} names ${script}`).toBe(true);
      expect(realpathSync(here)).toBe(realpathSync(installedBin));
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
