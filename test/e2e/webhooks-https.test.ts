import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  freePort,
  processTracker,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';
import { createTestCa } from '../helpers/tls-certs.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

/** The SHA-256 fingerprint of the certificate the receiver presents to a new connection. */
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

const fingerprintOf = (certFile: string) =>
  new X509Certificate(readFileSync(certFile)).fingerprint256;

interface Report {
  stats: { events: number; delivered: number; lost: number };
}

describe('webhooks alone over HTTPS', () => {
  it('applies every event, and serves a renewed certificate after SIGHUP without a restart', async () => {
    const dir = tempDir();
    const ca = createTestCa(dir);
    const first = ca.issue('first');
    const second = ca.issue('second');
    const certFile = join(dir, 'live.crt');
    const keyFile = join(dir, 'live.key');
    copyFileSync(first.certFile, certFile);
    copyFileSync(first.keyFile, keyFile);

    const port = await freePort();
    const publicKeyFile = join(dir, 'service-public.pem');
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
        `https://127.0.0.1:${port}/webhooks/`,
        '--webhook-public-key-file',
        publicKeyFile,
        '--webhook-ca-file',
        ca.caFile,
      ]),
    );
    const dbPath = join(dir, 'mirror.db');
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: dbPath,
      TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: publicKeyFile,
      TRANSPORT_WEBHOOK_TLS_CERT_FILE: certFile,
      TRANSPORT_WEBHOOK_TLS_KEY_FILE: keyFile,
    });
    const daemon = processes.track(startCli(['run'], env));
    await daemon.waitFor(/"msg":"webhook receiver listening"/);
    expect(daemon.output().stdout).toContain(`"url":"https://127.0.0.1:${port}/webhooks/"`);
    expect(await servedFingerprint(port, ca.caFile)).toBe(fingerprintOf(first.certFile));
    const report = async () =>
      ((await (await fetch(`${sim.url}/_sim/webhooks/`)).json()) as Report).stats;
    const until = (condition: () => Promise<boolean> | boolean) =>
      vi.waitUntil(condition, { timeout: 15_000, interval: 50 });
    await until(async () => (await report()).delivered > 0);
    const before = await report();

    // A renewal: both files replaced, then the reload signal systemd's ExecReload sends.
    copyFileSync(second.certFile, certFile);
    copyFileSync(second.keyFile, keyFile);
    daemon.child.kill('SIGHUP');
    await daemon.waitFor(/"why":"SIGHUP","msg":"webhook TLS certificate reloaded"/, 5_000);
    expect(await servedFingerprint(port, ca.caFile)).toBe(fingerprintOf(second.certFile));
    // Deliveries go on over the new certificate.
    await until(async () => (await report()).delivered > before.delivered);
    const after = await report();

    // Every event delivered by then is stored, and applied a moment later; none was lost.
    const db = new Database(dbPath, { readonly: true });
    try {
      const stored = () =>
        db
          .prepare(
            'SELECT count(*) AS n, coalesce(sum(processed_at IS NOT NULL AND error IS NULL), 0) AS applied FROM webhook_events',
          )
          .get() as { n: number; applied: number };
      expect(stored().n).toBeGreaterThanOrEqual(after.delivered);
      await until(() => stored().applied >= after.delivered);
    } finally {
      db.close();
    }
    expect((await report()).lost).toBe(0);
    expect(daemon.child.exitCode).toBeNull();
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  }, 60_000);

  it('refuses to start, exit 2, when the key does not belong to the certificate', async () => {
    const dir = tempDir();
    const ca = createTestCa(dir);
    const [first, second] = [ca.issue('first'), ca.issue('second')];
    const sim = processes.track(await startSimulatorProcess(['--requests', '1', '--retire-v1']));
    const publicKeyFile = join(dir, 'service-public.pem');
    copyFileSync(ca.caFile, publicKeyFile);
    const result = await runCli(
      ['run'],
      serviceEnv(sim.url, {
        TRANSPORT_DB: join(dir, 'mirror.db'),
        TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${await freePort()}`,
        TRANSPORT_WEBHOOK_ALLOW_UNSIGNED: '1',
        TRANSPORT_WEBHOOK_TLS_CERT_FILE: first.certFile,
        TRANSPORT_WEBHOOK_TLS_KEY_FILE: second.keyFile,
      }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the webhook TLS certificate and key do not make a usable pair/);
  });
});
