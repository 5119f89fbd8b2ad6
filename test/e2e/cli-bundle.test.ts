import { isAscii } from 'node:buffer';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  processTracker,
  runCli,
  serviceEnv,
  startSimulatorProcess,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

// The CLI as `npm run build` leaves it (scripts/bundle.mjs; npm test builds first): every command
// in dist/cli/cli.cjs, the PostgreSQL driver beside it in dist/cli/pg.cjs, loaded by bin.js with
// V8's code cache (src/cli/code-cache.ts). Run as a process, as users run it.
const CLI = fileURLToPath(new URL('../../dist/cli/', import.meta.url));
const PROBE = new URL('../helpers/require-probe.mjs', import.meta.url).href;
/** better-sqlite3's native addon, which the bundle loads by path (src/db/sqlite/driver.ts). */
const SQLITE_ADDON = expect.stringMatching(/[/\\]better_sqlite3\.node$/);

/** A bundle's text, failing with what to do when the CLI has not been built. */
function bundleText(name: string): Buffer {
  const path = join(CLI, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
  return readFileSync(path);
}

/** The node_modules files the bundler inlined into `name`: it names each in a comment. */
const inlinedModules = (name: string) =>
  [
    ...bundleText(name)
      .toString('utf8')
      .matchAll(/^\/\/ (node_modules\/\S+)$/gm),
  ].map((match) => match[1]!);

/** A folder for the code cache and a file for the require probe, and the environment using them. */
function probedEnv(extra: Record<string, string> = {}) {
  const dir = tempDir('cli-bundle-');
  const cache = join(dir, 'cache');
  const probe = join(dir, 'required.txt');
  const env = cleanEnv({
    NODE_COMPILE_CACHE: cache,
    NODE_OPTIONS: `--import ${PROBE}`,
    REQUIRE_PROBE_OUT: probe,
    ...extra,
  });
  const required = () => (existsSync(probe) ? readFileSync(probe, 'utf8').split('\n') : []);
  // The CLI's cache files (on Node 22 and later, Node keeps its own there too, in a folder).
  const cached = () =>
    existsSync(cache)
      ? readdirSync(cache)
          .filter((name) => name.startsWith('transport-sync-'))
          .sort()
      : [];
  return { dir, cache, env, required, cached };
}

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('the CLI bundle', () => {
  it('is one ASCII CommonJS file, with the PostgreSQL driver in a file of its own', () => {
    const cli = bundleText('cli.cjs');
    expect(isAscii(cli)).toBe(true);
    expect(isAscii(bundleText('pg.cjs'))).toBe(true);
    expect(inlinedModules('cli.cjs').filter((path) => path.startsWith('node_modules/pg/'))).toEqual(
      [],
    );
    expect(cli.toString('latin1')).toContain('require("./pg.cjs")');
    expect(inlinedModules('pg.cjs')).toContain('node_modules/pg/lib/client.js');
  });

  it("carries zod, and of zod's locales only English, the one its messages use", () => {
    const modules = inlinedModules('cli.cjs');
    expect(modules.some((path) => path.startsWith('node_modules/zod/v4/core/'))).toBe(true);
    // The locales' index stays as an empty wrapper: what it exports is left out.
    const locales = new Set(
      modules.filter((path) => path.includes('/zod/v4/locales/') && !path.endsWith('/index.js')),
    );
    expect([...locales]).toEqual(['node_modules/zod/v4/locales/en.js']);
  });

  it('loads no database driver for a command until it opens a mirror, and then only its own', async () => {
    // The daemon (`run`) loads the SQLite tools of doctor and backup as it starts, once.
    for (const command of ['sync', 'status', 'accept', 'backfill', 'changes', 'migrate']) {
      const probed = probedEnv();
      const result = await runCli([command, '--help'], probed.env);
      expect(result.code, `${command}: ${result.stderr}`).toBe(0);
      expect(probed.required(), command).not.toContainEqual(SQLITE_ADDON);
      // pg.cjs, once loaded, leaves a cache of its own at the exit.
      expect(probed.cached(), command).not.toContainEqual(expect.stringMatching(/-pg-/));
    }
    // A sync of a SQLite mirror.
    const sim = processes.track(await startSimulatorProcess(['--requests', '20']));
    const probed = probedEnv();
    const env = { ...serviceEnv(sim.url), ...probed.env, TRANSPORT_DB: join(probed.dir, 'm.db') };
    const result = await runCli(['sync'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(probed.required()).toContainEqual(SQLITE_ADDON);
    expect(probed.cached()).toEqual([expect.stringMatching(/^transport-sync-cli-.+-sync\.cache$/)]);
  });

  it("keeps a command's compiled code, private to its user, for its next run", async () => {
    const probed = probedEnv();
    const first = await runCli(['--version'], probed.env);
    expect(first.code).toBe(0);
    // Made 0700 by the CLI; on Node 22 and later Node makes it first, under the umask (0755 here):
    // either way no one else may write to it.
    expect(statSync(probed.cache).mode & 0o022).toBe(0);
    const [name] = probed.cached();
    expect(probed.cached()).toEqual([
      expect.stringMatching(/^transport-sync-cli-.+-other\.cache$/),
    ]);
    const file = join(probed.cache, name!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const writtenAt = statSync(file).mtimeMs;

    // The next run compiles nothing of what the cache holds, and leaves it as it is.
    const second = await runCli(['--version'], probed.env);
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(file).mtimeMs).toBe(writtenAt);
    // Another command keeps its own.
    expect((await runCli(['status', '--help'], probed.env)).code).toBe(0);
    expect(probed.cached()).toHaveLength(2);
  });

  it('says that the install is broken when the bundle is missing, without a stack', async () => {
    const dir = tempDir('cli-bundle-bin-');
    copyFileSync(join(CLI, 'bin.js'), join(dir, 'bin.js'));
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(dir, 'bin.js'), 'status'], { env: cleanEnv() });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `transport-sync: error: cannot read ${join(dir, 'cli.cjs')} (ENOENT)\n` +
        '  hint: install the package again (docs/operations.md), or run `npm run build` in a checkout\n',
    );
  });

  it('writes no cache when NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const probed = probedEnv({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect((await runCli(['--version'], probed.env)).code).toBe(0);
    expect(existsSync(probed.cache)).toBe(false);
  });
});
