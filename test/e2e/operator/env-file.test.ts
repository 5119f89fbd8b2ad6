import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, processTracker, runCli, startCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/records.js';

// The environment file as the commands read it: the settings the unit reads (EnvironmentFile=),
// for a command typed at a shell, with nothing else in its environment. Each run starts in an
// empty folder, so a default such as ./data/transport-sync.db would show.

const processes = processTracker();
afterEach(() => processes.stopAll());

/** A server's layout in a scratch folder: the environment file, the state folder, a shell's cwd. */
function server(lines: string[]) {
  const dir = tempDir();
  const state = join(dir, 'var-lib-transport-sync');
  const cwd = join(dir, 'home');
  mkdirSync(state);
  mkdirSync(cwd);
  const envFile = join(dir, 'transport-sync.env');
  const dbPath = join(state, 'transport-sync.db');
  writeFileSync(envFile, [`TRANSPORT_DB=${dbPath}`, ...lines, ''].join('\n'));
  return { dir, state, cwd, envFile, dbPath };
}

describe('the environment file', () => {
  it("gives a command run by hand the daemon's settings: migrate, status and backup find the database", async () => {
    const { dir, cwd, envFile, dbPath } = server([
      '# as the unit reads it',
      'TRANSPORT_POLL_CRON="*/20 * * * * *"',
      "LOG_LEVEL='warn'",
    ]);
    const env = cleanEnv({ TRANSPORT_ENV_FILE: envFile });
    const migrate = await runCli(['migrate'], env, cwd);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(existsSync(dbPath)).toBe(true);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    const status = await runCli(['status', '--json'], env, cwd);
    expect(status.stderr).toBe('');
    const report = JSON.parse(status.stdout) as Record<string, unknown>;
    expect(report.database_path).toBe(dbPath);
    const backup = await runCli(['backup', join(dir, 'backup.db')], env, cwd);
    expect(backup.code, backup.stderr).toBe(0);
    expect(existsSync(join(dir, 'backup.db'))).toBe(true);
  });

  it('yields to the environment: a variable set there wins over the file', async () => {
    const { state, cwd, envFile, dbPath } = server([]);
    const other = join(state, 'other.db');
    const migrate = await runCli(
      ['migrate'],
      cleanEnv({ TRANSPORT_ENV_FILE: envFile, TRANSPORT_DB: other }),
      cwd,
    );
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(dbPath)).toBe(false);
  });

  it('named but missing: exit 2 with a hint, nothing done', async () => {
    const { dir, cwd } = server([]);
    const missing = join(dir, 'transport-sync.env.typo');
    const result = await runCli(['migrate'], cleanEnv({ TRANSPORT_ENV_FILE: missing }), cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `transport-sync: error: cannot read the environment file ${missing} (named by TRANSPORT_ENV_FILE): no such file (ENOENT)\n` +
        '  hint: Check the path in TRANSPORT_ENV_FILE, or set TRANSPORT_ENV_FILE= (empty) to read no file.\n',
    );
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('with a line a shell and systemd would read differently: exit 2 naming the line, nothing done', async () => {
    const { cwd, envFile, dbPath } = server([
      '# the schedule, unquoted: a shell would run "*" as a command',
      'TRANSPORT_POLL_CRON=0 */5 * * * *',
    ]);
    const result = await runCli(['migrate'], cleanEnv({ TRANSPORT_ENV_FILE: envFile }), cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^transport-sync: error: the environment file ${envFile} is refused: line 3: a space in an unquoted value`,
      ),
    );
    expect(result.stderr).toMatch(/\n {2}hint: .*KEY="value with spaces".*set -a; \. FILE/);
    expect(existsSync(dbPath)).toBe(false);
  });

  it('is not read by the simulator, which brings its own settings', async () => {
    const { dir } = server([]);
    const sim = processes.track(
      startCli(
        ['simulator', '--port', '0'],
        cleanEnv({ TRANSPORT_ENV_FILE: join(dir, 'missing.env') }),
      ),
    );
    await sim.waitFor(/listening on http:\/\/\S+/);
  });

  it('is listed by help config, with its default path', async () => {
    const help = await runCli(['help', 'config'], cleanEnv());
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /^ {2}TRANSPORT_ENV_FILE \(default: \/etc\/transport-sync\/transport-sync\.env\)$/m,
    );
  });
});
