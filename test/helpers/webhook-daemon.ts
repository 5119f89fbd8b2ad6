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

/** What `GET /_sim/webhooks/` reports: the sender's counts and the events it gave up on. */
export interface WebhookReport {
  stats: {
    events: number;
    attempts: number;
    delivered: number;
    duplicates: number;
    lost: number;
    /** Deliveries waiting for their next attempt. */
    retrying: number;
  };
  lost: { eventId: string; requestId: string | null; action: string | null }[];
}

/** A simulator process that has retired v1.0 and sends signed webhooks, and a daemon for it. */
export interface WebhookDaemonFixture {
  sim: RunningCli & { url: string };
  env: NodeJS.ProcessEnv;
  dbPath: string;
  startDaemon(): Promise<RunningCli>;
  /** The sender's counts and the events it gave up after its last retry. */
  webhookReport(): Promise<WebhookReport>;
  /** The report once `isDone` holds for it (checked every 50 ms). */
  webhookReportWhen(
    isDone: (report: WebhookReport) => boolean,
    timeoutMs?: number,
  ): Promise<WebhookReport>;
  /**
   * The report once every event sent so far has been delivered or given up after its last
   * attempt: none is in flight or waiting for a retry (it comes once mutations stop).
   */
  webhooksSettled(timeoutMs?: number): Promise<WebhookReport>;
  /**
   * From now on, `perTick` random changes every `everyMs` through the simulator's control API
   * (a simulator started with `mutateEveryMs: 0` sends nothing before).
   */
  startMutating(options: { everyMs: number; perTick: number }): void;
  /** The simulator stops changing its requests, so it sends no new event. */
  stopMutating(): Promise<void>;
  /** Runs a query on the mirror, read-only. */
  query<T>(sql: string, ...params: unknown[]): T[];
  status(): Promise<{ code: number | null; report: Record<string, unknown> }>;
}

/**
 * Starts the simulator with `requests` requests, by default as the service runs today: changing
 * some every `mutateEveryMs` from its start (0: only once `startMutating` is called), retrying
 * webhooks on the service's schedule unless `retryDelaysMs` plays them at another pace.
 * `daemonEnv` adds daemon settings.
 */
export async function startWebhookDaemonFixture(
  track: <T extends RunningCli>(process: T) => T,
  {
    requests = 60,
    mutateEveryMs = 500,
    retryDelaysMs,
    daemonEnv = {},
  }: {
    requests?: number;
    mutateEveryMs?: number;
    retryDelaysMs?: number[];
    daemonEnv?: Record<string, string>;
  } = {},
): Promise<WebhookDaemonFixture> {
  const port = await freePort();
  const dir = tempDir();
  const keyFile = join(dir, 'service-public.pem');
  const sim = track(
    await startSimulatorProcess([
      '--requests',
      String(requests),
      '--retire-v1',
      '--mutate-every',
      String(mutateEveryMs),
      '--mutate-per-tick',
      '2',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks/`,
      '--webhook-public-key-file',
      keyFile,
      ...(retryDelaysMs ? ['--webhook-retry-delays-ms', retryDelaysMs.join(',')] : []),
    ]),
  );
  const dbPath = join(dir, 'hooks.db');
  const env = serviceEnv(sim.url, {
    TRANSPORT_DB: dbPath,
    TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: keyFile,
    ...daemonEnv,
  });
  const webhookReport = async () =>
    (await fetch(`${sim.url}/_sim/webhooks/`)).json() as Promise<WebhookReport>;
  const webhookReportWhen = async (
    isDone: (report: WebhookReport) => boolean,
    timeoutMs = 30_000,
  ) => {
    let report: WebhookReport | undefined;
    await waitUntil(
      async () => isDone((report = await webhookReport())),
      timeoutMs,
      () => `the webhook report never got there: ${JSON.stringify(report?.stats)}`,
    );
    return report!;
  };
  const post = async (path: string) => {
    const response = await fetch(`${sim.url}/_sim/${path}`, { method: 'POST' });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`POST /_sim/${path} answered ${response.status}`);
  };
  // The mutation loop started by startMutating: stopMutating ends it, and reports its failure.
  let mutating: { isOn: boolean; done: Promise<unknown> } | undefined;
  return {
    sim,
    env,
    dbPath,
    async startDaemon() {
      const daemon = track(startCli(['run'], env));
      await daemon.waitFor(/"msg":"webhook receiver listening"/);
      return daemon;
    },
    webhookReport,
    webhookReportWhen,
    // Each delivery (an event, or a copy of one) ends either delivered or lost.
    webhooksSettled: (timeoutMs) =>
      webhookReportWhen(
        ({ stats }) => stats.delivered + stats.lost === stats.events + stats.duplicates,
        timeoutMs,
      ),
    startMutating({ everyMs, perTick }) {
      const loop = { isOn: true, done: Promise.resolve() as Promise<unknown> };
      // A failure ends the loop and is kept for stopMutating (none goes unhandled if the test
      // fails first and the simulator is killed under it).
      loop.done = (async () => {
        while (loop.isOn) {
          await post(`mutate/?count=${perTick}`);
          await sleep(everyMs);
        }
      })().catch((error: unknown) => error);
      mutating = loop;
    },
    async stopMutating() {
      if (mutating) {
        mutating.isOn = false;
        const failure = await mutating.done;
        mutating = undefined;
        if (failure) throw failure;
      }
      await post('stop-mutating/');
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

/** Checks `isDone` every 50 ms until it holds; fails after `timeoutMs` with `describe()`. */
export async function waitUntil(
  isDone: () => boolean | Promise<boolean>,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isDone())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await sleep(50);
  }
}

/** Waits `ms` of real time. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
