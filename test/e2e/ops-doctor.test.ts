import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  freePort,
  runCli,
  serviceEnv,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { natsUrl } from '../helpers/nats.js';
import { tempDir } from '../helpers/records.js';
import { keyPair } from '../helpers/webhooks.js';

let sim: RunningCli & { url: string };
beforeAll(async () => {
  sim = await startSimulatorProcess(['--requests', '30']);
});
afterAll(async () => {
  if (sim.child.exitCode === null) sim.child.kill('SIGKILL');
  await sim.exited;
});

/** The service's webhook signing key, as the organization admin downloads it (PEM). */
const PUBLIC_KEY = keyPair().publicKeyPem;

/** A healthy setup: the secret in a 0600 file, a migrated database, a receiver with its key. */
async function healthyEnv(url: string, extra: Record<string, string> = {}) {
  const dir = tempDir();
  const secretFile = join(dir, 'client_secret');
  writeFileSync(secretFile, 'demo-secret\n', { mode: 0o600 });
  const keyFile = join(dir, 'webhook-public-key.pem');
  writeFileSync(keyFile, PUBLIC_KEY);
  const db = join(dir, 'mirror.db');
  const env = serviceEnv(url, {
    TRANSPORT_DB: db,
    TRANSPORT_CLIENT_SECRET_FILE: secretFile,
    TRANSPORT_WEBHOOK_LISTEN: '127.0.0.1:0',
    TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    ...extra,
  });
  delete env.TRANSPORT_CLIENT_SECRET;
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return { env, db, secretFile };
}

/** The line of one check and the "what to do" line under it, if any. */
function check(stdout: string, name: string): { line: string; todo?: string } {
  const lines = stdout.split('\n');
  const index = lines.findIndex((line) => line.slice(6).startsWith(name));
  if (index < 0) throw new Error(`no ${name} check in:\n${stdout}`);
  const next = lines[index + 1];
  return {
    line: lines[index]!,
    todo: next?.startsWith('      what to do: ') ? next.slice(18) : undefined,
  };
}

describe('transport-sync doctor', () => {
  it('passes every check on a healthy setup (exit 0)', async () => {
    const { env } = await healthyEnv(sim.url);
    const result = await runCli(['doctor'], env);
    expect(result.code, result.stdout).toBe(0);
    const names = [
      'configuration',
      'client secret',
      'webhook receiver',
      'intake',
      'file modes',
      'schema',
      'database writable',
      'token endpoint',
      'list call',
      'clock',
    ];
    for (const name of names) expect(check(result.stdout, name).line).toMatch(/^ok {4}/);
    // The test machine's own disk decides this one; ok or warn, it names the space left.
    expect(check(result.stdout, 'free space').line).toMatch(/^(ok {4}|warn {2})free space: \d/);
    expect(result.stdout).not.toContain('demo-secret');
    const json = await runCli(['doctor', '--json'], env);
    const checks = JSON.parse(json.stdout) as { name: string; status: string }[];
    expect(checks.filter((c) => c.name !== 'free space').map((c) => c.status)).toEqual(
      names.map(() => 'ok'),
    );
  });

  it('reaches the NATS of the feed, and fails one that does not answer', async () => {
    const subject = `transport_sync_doctor.${process.pid}.changes`;
    const { env } = await healthyEnv(sim.url, {
      TRANSPORT_FEED_NATS_URL: await natsUrl(),
      TRANSPORT_FEED_NATS_SUBJECT: subject,
    });
    const reached = await runCli(['doctor'], env);
    expect(reached.code, reached.stdout).toBe(0);
    expect(check(reached.stdout, 'feed NATS').line).toMatch(
      new RegExp(
        `^ok {4}feed NATS: .*JetStream on; no stream captures ${subject.replaceAll('.', '\\.')} yet`,
      ),
    );
    const port = await freePort();
    const away = await runCli(['doctor'], {
      ...env,
      TRANSPORT_FEED_NATS_URL: `nats://127.0.0.1:${port}`,
    });
    expect(away.code, away.stdout).toBe(1);
    const line = check(away.stdout, 'feed NATS');
    expect(line.line).toMatch(
      /^FAIL {2}feed NATS: NATS sink: cannot reach JetStream at nats:\/\/127\.0\.0\.1:\d+/,
    );
    expect(line.todo).toMatch(/TRANSPORT_FEED_NATS_URL/);
  });

  it('fails a setup that can receive nothing, and warns of polling alone', async () => {
    const { env } = await healthyEnv(sim.url, { TRANSPORT_POLL: 'off' });
    delete env.TRANSPORT_WEBHOOK_LISTEN;
    const off = await runCli(['doctor'], env);
    expect(off.code, off.stdout).toBe(1);
    const intake = check(off.stdout, 'intake');
    expect(intake.line).toMatch(/^FAIL {2}intake: TRANSPORT_POLL=off and no webhook receiver/);
    expect(intake.todo).toMatch(/TRANSPORT_WEBHOOK_LISTEN and TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE/);

    const auto = await runCli(['doctor'], { ...env, TRANSPORT_POLL: 'auto' });
    expect(check(auto.stdout, 'intake').line).toMatch(
      /^warn {2}intake: polling alone \(TRANSPORT_POLL=auto\), which the service retired/,
    );
  });

  it('names a file that is not a database as such, and says what to do', async () => {
    const { env, db } = await healthyEnv(sim.url);
    writeFileSync(db, 'not a database\n');
    const result = await runCli(['doctor'], env);
    expect(result.code).toBe(1);
    const database = check(result.stdout, 'database');
    expect(database.line).toMatch(/^FAIL {2}database: the database .* is not an SQLite database/);
    expect(database.todo).toMatch(/restore the latest backup/);
  });

  it('fails the token check of an unreachable URL and says what to do', async () => {
    const { env } = await healthyEnv('http://127.0.0.1:9');
    const result = await runCli(['doctor'], env);
    expect(result.code).toBe(1);
    const token = check(result.stdout, 'token endpoint');
    expect(token.line).toMatch(
      /^FAIL {2}token endpoint: could not obtain an access token.*TRANSPORT_AUTH_URL is http:\/\/127\.0\.0\.1:9/,
    );
    expect(token.todo).toMatch(/token endpoint \(auth URL\) is reachable and correct/);
    expect(check(result.stdout, 'list call').line).toMatch(/^skip {2}list call: no token/);
    // The local checks still ran.
    expect(check(result.stdout, 'schema').line).toMatch(/^ok/);
  });

  it('fails the token check of wrong credentials and names the variables to fix', async () => {
    const { env, secretFile } = await healthyEnv(sim.url);
    writeFileSync(secretFile, 'wrong-secret');
    const result = await runCli(['doctor'], env);
    expect(result.code).toBe(1);
    const token = check(result.stdout, 'token endpoint');
    expect(token.line).toMatch(
      /^FAIL {2}token endpoint: the token endpoint rejected the client credentials/,
    );
    expect(token.todo).toMatch(/Check TRANSPORT_CLIENT_ID and TRANSPORT_CLIENT_SECRET/);
    expect(result.stdout).not.toContain('wrong-secret');
  });

  it('says chmod 600 for a database or secret file others can read', async () => {
    const { env, db, secretFile } = await healthyEnv(sim.url);
    chmodSync(db, 0o644);
    chmodSync(secretFile, 0o644);
    const result = await runCli(['doctor'], env);
    expect(result.code).toBe(1);
    const modes = check(result.stdout, 'file modes');
    expect(modes.line).toContain(`${db} is 0644`);
    expect(modes.todo).toMatch(new RegExp(`^chmod 600 ${db}`));
    const secret = check(result.stdout, 'client secret');
    expect(secret.line).toMatch(/^FAIL .*readable by every user \(mode 0644\)/);
    expect(secret.todo).toMatch(new RegExp(`^chmod 600 ${secretFile}`));
  });

  it('fails an unmigrated database and a missing one, pointing at migrate', async () => {
    const { env, db } = await healthyEnv(sim.url);
    const old = join(tempDir(), 'old.db');
    const sqlite = new Database(old);
    sqlite.exec('CREATE TABLE legacy (x)');
    sqlite.close();
    chmodSync(old, 0o600);
    const unmigrated = await runCli(['doctor', '--db', old], env);
    expect(unmigrated.code).toBe(1);
    const schema = check(unmigrated.stdout, 'schema');
    expect(schema.line).toMatch(/^FAIL {2}schema: schema version 0, this version needs \d+/);
    expect(schema.todo).toMatch(/transport-sync migrate/);
    // The doctor looked and changed nothing: still unmigrated.
    const after = new Database(old, { readonly: true });
    expect(
      after.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'requests'").get(),
    ).toEqual({ n: 0 });
    after.close();

    const missing = await runCli(['doctor', '--db', `${db}.nope`], env);
    expect(missing.code).toBe(1);
    expect(check(missing.stdout, 'database').line).toMatch(/^FAIL {2}database: no database at/);
    // No file, so no mode to judge: not an "ok" beside a missing database.
    expect(check(missing.stdout, 'file modes').line).toMatch(
      /^skip {2}file modes: no database file/,
    );
  });

  it('reports invalid configuration and skips what depends on it', async () => {
    const result = await runCli(['doctor'], cleanEnv({ TRANSPORT_DB: join(tempDir(), 'x.db') }));
    expect(result.code).toBe(1);
    expect(check(result.stdout, 'configuration').line).toMatch(
      /^FAIL {2}configuration: invalid configuration: TRANSPORT_AUTH_URL is required/,
    );
    expect(check(result.stdout, 'token endpoint').line).toMatch(/^skip/);
  });

  it('fails what run refuses, as run refuses it: the cron pattern, the receiver key, a secret file', async () => {
    const { env } = await healthyEnv(sim.url);
    // Each setup: what run says (exit 2, its error line) and the doctor check that must fail.
    const badKey = join(tempDir(), 'no-such-key.pem');
    const cases: [Record<string, string>, string, RegExp][] = [
      [
        { TRANSPORT_POLL_CRON: '61 * * * *' },
        'configuration',
        /TRANSPORT_POLL_CRON must be a cron pattern/,
      ],
      [
        { TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: badKey },
        'webhook receiver',
        /cannot read the webhook public key/,
      ],
      [
        {
          TRANSPORT_FEED_WEBHOOK_URL: 'https://dispatch.example.net/changes',
          TRANSPORT_FEED_WEBHOOK_SECRET_FILE: badKey,
        },
        'feed webhook',
        /TRANSPORT_FEED_WEBHOOK_SECRET_FILE \(.*\) cannot be read/,
      ],
    ];
    for (const [extra, name, problem] of cases) {
      const bad = { ...env, ...extra };
      const run = await runCli(['run'], bad);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(problem);
      const doctor = await runCli(['doctor'], bad);
      expect(doctor.code, doctor.stdout).toBe(1);
      expect(check(doctor.stdout, name).line).toMatch(
        new RegExp(`^FAIL {2}${name}: .*${problem.source}`),
      );
    }
    // The database password file is a secret like the client secret's: not readable by all.
    const passwordFile = join(tempDir(), 'db_password');
    writeFileSync(passwordFile, 'secret\n', { mode: 0o644 });
    chmodSync(passwordFile, 0o644);
    const doctor = await runCli(['doctor'], { ...env, TRANSPORT_DB_PASSWORD_FILE: passwordFile });
    expect(doctor.code).toBe(1);
    const line = check(doctor.stdout, 'database password');
    expect(line.line).toMatch(
      /^FAIL {2}database password: .* is readable by every user \(mode 0?644\)/,
    );
    expect(line.todo).toBe(
      `chmod 600 ${passwordFile} (and chown it to the user the daemon runs as).`,
    );
  });
});
