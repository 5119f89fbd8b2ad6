import { X509Certificate } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  freePort,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
} from '../../helpers/cli.js';
import { tempDir } from '../../helpers/records.js';
import { createTestCa } from '../../helpers/tls-certs.js';

// Every secret and key from $CREDENTIALS_DIRECTORY, as systemd's LoadCredential= hands them over
// (one file per credential, named by the credential, mode 0400): the client secret, the database
// password, the webhook public key, and the receiver's TLS certificate and key. No *_FILE setting
// names any of them.

const processes = processTracker();
let setup: Awaited<ReturnType<typeof setUp>>;
beforeAll(async () => {
  setup = await setUp();
}, 60_000);
afterAll(() => processes.stopAll());

interface DoctorCheck {
  name: string;
  status: string;
  detail?: string;
}

/** A credentials folder as systemd makes it, and a service that delivers over HTTPS to it. */
async function setUp() {
  const dir = tempDir();
  const credentials = join(dir, 'credentials');
  mkdirSync(credentials, { mode: 0o700 });
  const ca = createTestCa(dir);
  const receiver = ca.issue('receiver');
  copyFileSync(receiver.certFile, join(credentials, 'webhook_tls_cert'));
  copyFileSync(receiver.keyFile, join(credentials, 'webhook_tls_key'));
  writeFileSync(join(credentials, 'client_secret'), 'demo-secret\n');
  writeFileSync(join(credentials, 'db_password'), 'not-used-by-sqlite\n');
  const port = await freePort();
  // The simulator writes the public key its webhooks are signed with: the file an operator
  // downloads from the service's settings, here straight into the credentials folder.
  const sim = processes.track(
    await startSimulatorProcess([
      '--requests',
      '30',
      '--mutate-every',
      '300',
      '--mutate-per-tick',
      '2',
      '--webhook-url',
      `https://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      join(credentials, 'webhook_public_key'),
      '--webhook-ca-file',
      ca.caFile,
    ]),
  );
  for (const name of ['client_secret', 'db_password', 'webhook_public_key', 'webhook_tls_cert']) {
    chmodSync(join(credentials, name), 0o400);
  }
  chmodSync(join(credentials, 'webhook_tls_key'), 0o400);
  const dbPath = join(dir, 'mirror.db');
  const env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    CREDENTIALS_DIRECTORY: credentials,
  });
  delete env.TRANSPORT_CLIENT_SECRET;
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return { dir, credentials, ca, receiver, port, sim, env, dbPath };
}

/** The SHA-256 fingerprint of the certificate served on `port`. */
function servedFingerprint(port: number, caFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(caFile) }, () => {
      const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

describe('every credential from $CREDENTIALS_DIRECTORY', () => {
  it('satisfies doctor, which checks the modes of the files it resolved there', async () => {
    const { credentials, env } = setup;
    const doctor = await runCli(['doctor', '--json'], env);
    const checks = JSON.parse(doctor.stdout) as DoctorCheck[];
    const failed = checks.filter((check) => check.status === 'fail');
    expect(failed, doctor.stdout).toEqual([]);
    expect(doctor.code, doctor.stderr).toBe(0);
    const byName = new Map(checks.map((check) => [check.name, check]));
    expect(byName.get('configuration')?.status).toBe('ok');
    expect(byName.get('client secret')).toMatchObject({
      status: 'ok',
      detail: `${join(credentials, 'client_secret')} (mode 0400)`,
    });
    expect(byName.get('database password')).toMatchObject({
      status: 'ok',
      detail: `${join(credentials, 'db_password')} (mode 0400)`,
    });
    expect(byName.get('webhook TLS key')).toMatchObject({
      status: 'ok',
      detail: `${join(credentials, 'webhook_tls_key')} (mode 0400)`,
    });
    expect(byName.get('webhook receiver')).toMatchObject({
      status: 'ok',
      detail: 'its key, certificate and TLS key read',
    });
    expect(byName.get('token endpoint')?.status).toBe('ok');

    // A TLS key credential readable by every user fails, as a *_FILE would.
    chmodSync(join(credentials, 'webhook_tls_key'), 0o644);
    const loose = await runCli(['doctor'], env);
    chmodSync(join(credentials, 'webhook_tls_key'), 0o400);
    expect(loose.code).toBe(1);
    expect(loose.stdout).toMatch(
      new RegExp(
        `FAIL  webhook TLS key: ${join(credentials, 'webhook_tls_key')} is readable by every user`,
      ),
    );
  });

  it('start the receiver over HTTPS with that key and certificate, and deliveries are stored', async () => {
    const { ca, receiver, port, sim, env, dbPath } = setup;
    const daemon = processes.track(startCli(['run'], env));
    await daemon.waitFor(/"msg":"webhook receiver listening"/);
    expect(daemon.output().stdout).toContain(`"url":"https://127.0.0.1:${port}/webhooks/"`);
    expect(await servedFingerprint(port, ca.caFile)).toBe(
      new X509Certificate(readFileSync(receiver.certFile)).fingerprint256,
    );
    // Signed deliveries, verified with the credential's public key, arrive and are stored.
    const delivered = async () =>
      (
        (await (await fetch(`${sim.url}/_sim/webhooks/`)).json()) as {
          stats: { delivered: number };
        }
      ).stats.delivered;
    await vi.waitUntil(async () => (await delivered()) >= 3, { timeout: 20_000, interval: 50 });
    const db = new Database(dbPath, { readonly: true });
    try {
      const { n } = db.prepare('SELECT count(*) AS n FROM webhook_events').get() as { n: number };
      expect(n).toBeGreaterThanOrEqual(3);
    } finally {
      db.close();
    }
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('is what the receiver runs on: without the public key credential, run refuses to start', async () => {
    const { dir, credentials, env } = setup;
    const without = join(dir, 'without-key');
    mkdirSync(without, { mode: 0o700 });
    for (const name of ['client_secret', 'webhook_tls_cert', 'webhook_tls_key']) {
      copyFileSync(join(credentials, name), join(without, name));
    }
    const refused = await runCli(['run'], { ...env, CREDENTIALS_DIRECTORY: without });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^transport-sync: error: .*public key/m);
  });
});
