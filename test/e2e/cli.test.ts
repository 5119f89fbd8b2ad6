import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  processTracker,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

describe('configuration and usage errors', () => {
  it('exits 2 with one line naming the variable, and never prints the secret', async () => {
    const env = serviceEnv('http://127.0.0.1:9', {
      TRANSPORT_CLIENT_SECRET: 'very-secret-42',
      TRANSPORT_WINDOW_PAST_HOURS: 'soon',
    });
    const result = await runCli(['sync'], env);
    expect(result.code).toBe(2);
    const [message] = result.stderr.split('\n');
    expect(message).toMatch(
      /^transport-sync: error: invalid configuration: TRANSPORT_WINDOW_PAST_HOURS must be a whole number/,
    );
    expect(result.stderr + result.stdout).not.toContain('very-secret-42');
  });

  it('names a missing variable', async () => {
    const result = await runCli(['sync'], cleanEnv({ TRANSPORT_DB: join(tempDir(), 'x.db') }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/TRANSPORT_AUTH_URL is required/);
  });

  it('refuses unknown commands and flags with exit 2', async () => {
    expect((await runCli(['frobnicate'], cleanEnv())).code).toBe(2);
    const flag = await runCli(['sync', '--bogus'], cleanEnv());
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/Unknown option '--bogus'/);
  });

  it('names --to, not TRANSPORT_DB, when the copy target carries a password, and hides it', async () => {
    const result = await runCli(
      ['copy', '--to', 'postgres://sync:hunter2@127.0.0.1:9/mirror'],
      cleanEnv({ TRANSPORT_DB: join(tempDir(), 'x.db') }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^transport-sync: error: --to must not carry a password/);
    expect(result.stderr).not.toContain('TRANSPORT_DB must');
    expect(result.stderr + result.stdout).not.toContain('hunter2');
  });

  it('prints help and the settings', async () => {
    const help = await runCli(['help', 'config'], cleanEnv());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('TRANSPORT_POLL_CRON');
  });
});

describe('the compile cache (Node 22 and later)', () => {
  const hasCompileCache =
    typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
  /** The environment of a command whose temporary folder is `tmp`, Node's own cache settings left out. */
  const envWithTmp = (tmp: string) => {
    const env = cleanEnv({ TMPDIR: tmp });
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    return env;
  };

  it('keeps the compiled code in a folder of the temporary folder that only its user can read', async () => {
    const tmp = tempDir();
    const result = await runCli(['--version'], envWithTmp(tmp));
    expect(result.code).toBe(0);
    const cache = join(tmp, 'node-compile-cache');
    if (!hasCompileCache) {
      // Node 20 has none: nothing is written.
      expect(existsSync(cache)).toBe(false);
      return;
    }
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    expect(readdirSync(cache, { recursive: true }).length).toBeGreaterThan(0);
  });

  it('runs as before where the cache cannot be written', async () => {
    const notAFolder = join(tempDir(), 'file');
    writeFileSync(notAFolder, '');
    const result = await runCli(['--version'], envWithTmp(notAFolder));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('the simulator as a process', () => {
  it('serves a token and the list over HTTP, and rejects a path without its trailing slash', async () => {
    const sim = await startSimulatorProcess(['--requests', '40']);
    processes.track(sim);
    const token = await fetch(`${sim.url}/v2.0/oauth2/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=demo-client&client_secret=demo-secret&grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${accessToken}` };
    const list = await fetch(`${sim.url}/openapi/v1.0/requests/?request__state=accepted`, {
      headers: auth,
    });
    expect(list.status).toBe(200);
    expect(Array.isArray(await list.json())).toBe(true);
    expect(
      (await fetch(`${sim.url}/openapi/v1.0/requests?request__state=accepted`, { headers: auth }))
        .status,
    ).toBe(404);
  });
});

describe('sync, migrate and run as processes against the simulator', () => {
  it('migrate creates a private database; sync mirrors the simulator and exits 0', async () => {
    const sim = await startSimulatorProcess(['--requests', '60']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'nested', 'mirror.db');
    const migrate = await runCli(['migrate', '--db', dbPath], cleanEnv());
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);

    const sync = await runCli(['sync'], serviceEnv(sim.url, { TRANSPORT_DB: dbPath }));
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^sync ok: \d+ seen, \d+ new/);
    const truth = (await (await fetch(`${sim.url}/_sim/truth/`)).json()) as {
      requestId: string;
      isVisible: boolean;
      eventDtUtc: string;
    }[];
    const db = new Database(dbPath, { readonly: true });
    const stored = db
      .prepare('SELECT request_id FROM requests')
      .all()
      .map((row) => (row as { request_id: string }).request_id);
    db.close();
    const from = new Date(Date.now() - 72 * 3_600_000).toISOString();
    const to = new Date(Date.now() + 336 * 3_600_000).toISOString();
    const expected = truth
      .filter((t) => t.isVisible && t.eventDtUtc >= from && t.eventDtUtc <= to)
      .map((t) => t.requestId);
    expect(stored.sort()).toEqual(expected.sort());
    // No secret and no patient name in the logs.
    expect(sync.stderr).not.toContain('demo-secret');
  });

  it('run polls on its schedule and stops with exit 0 on SIGTERM', async () => {
    const sim = await startSimulatorProcess(['--requests', '30']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'daemon.db');
    const daemon = startCli(
      ['run'],
      serviceEnv(sim.url, { TRANSPORT_DB: dbPath, TRANSPORT_POLL_CRON: '* * * * * *' }),
    );
    processes.track(daemon);
    await daemon.waitFor(/"msg":"poll cycle finished"[\s\S]*"msg":"poll cycle finished"/);
    const stoppedAt = Date.now();
    daemon.child.kill('SIGTERM');
    const result = await daemon.exited;
    expect(result.code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    expect(result.stdout).toContain('"msg":"transport-sync stopped"');
    const db = new Database(dbPath, { readonly: true });
    const runs = db.prepare("SELECT count(*) AS n FROM sync_runs WHERE status = 'ok'").get() as {
      n: number;
    };
    db.close();
    expect(runs.n).toBeGreaterThanOrEqual(2);
  });
});

describe('one daemon per database', () => {
  it('refuses a second daemon with a clear message, and lets a successor start once the first stops', async () => {
    const sim = await startSimulatorProcess(['--requests', '20']);
    processes.track(sim);
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: join(tempDir(), 'one.db'),
      TRANSPORT_POLL_CRON: '*/5 * * * * *',
    });
    const first = startCli(['run'], env);
    processes.track(first);
    await first.waitFor(/"msg":"poll cycle finished"/);
    const second = await runCli(['run'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /another transport-sync daemon \(pid \d+ on .+\) is running on this database/,
    );
    expect(second.stderr).toMatch(/hint: Stop it first/);
    // A one-shot sync may still run beside it.
    expect((await runCli(['sync'], env)).code).toBe(0);
    // status names the one daemon, leading since it started.
    const { cluster } = JSON.parse((await runCli(['status', '--json'], env)).stdout) as {
      cluster: { members: { pid: number; is_leader: boolean }[]; leader: { pid: number } | null };
    };
    expect(cluster.members).toEqual([
      expect.objectContaining({ pid: first.child.pid, is_leader: true }),
    ]);
    expect(cluster.leader).toMatchObject({ pid: first.child.pid });
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const successor = startCli(['run'], env);
    processes.track(successor);
    await successor.waitFor(/"msg":"poll cycle finished"/);
  });
});
