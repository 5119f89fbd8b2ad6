import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  freePort,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from './cli.js';
import { tempDir } from './records.js';

/** A simulator process that has retired v1.0 and sends signed webhooks, and a daemon for it. */
export interface WebhookDaemonFixture {
  sim: RunningCli & { url: string };
  env: NodeJS.ProcessEnv;
  dbPath: string;
  startDaemon(): Promise<RunningCli>;
  /** The sender's counts and the events it gave up on after its last retry. */
  webhookReport(): Promise<{
    stats: { events: number; delivered: number; lost: number };
    lost: { eventId: string; requestId: string | null; action: string | null }[];
  }>;
  /** Runs a query on the mirror, read-only. */
  query<T>(sql: string, ...params: unknown[]): T[];
  status(): Promise<{ code: number | null; report: Record<string, unknown> }>;
}

/** Starts the simulator (mutating every `mutateEveryMs`) as the service runs today. */
export async function startWebhookDaemonFixture(
  track: <T extends RunningCli>(process: T) => T,
  { mutateEveryMs = 500 }: { mutateEveryMs?: number } = {},
): Promise<WebhookDaemonFixture> {
  const port = await freePort();
  const dir = tempDir();
  const keyFile = join(dir, 'service-public.pem');
  const sim = track(
    await startSimulatorProcess([
      '--requests',
      '60',
      '--retire-v1',
      '--mutate-every',
      String(mutateEveryMs),
      '--mutate-per-tick',
      '2',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      keyFile,
    ]),
  );
  const dbPath = join(dir, 'hooks.db');
  const env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
  });
  return {
    sim,
    env,
    dbPath,
    async startDaemon() {
      const daemon = track(startCli(['run'], env));
      await daemon.waitFor(/"msg":"webhook receiver listening"/);
      return daemon;
    },
    async webhookReport() {
      return (await fetch(`${sim.url}/_sim/webhooks/`)).json() as never;
    },
    query<T>(sql: string, ...params: unknown[]): T[] {
      const db = new Database(dbPath, { readonly: true });
      try {
        return db.prepare(sql).all(...params) as T[];
      } finally {
        db.close();
      }
    },
    async status() {
      const result = await runCli(['status', '--json'], env);
      return { code: result.code, report: JSON.parse(result.stdout) as Record<string, unknown> };
    },
  };
}

/** Waits `ms` of real time. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
