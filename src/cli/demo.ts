import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { loadConfig, type Config } from '../config/index.js';
import { handleSignals, startDaemon } from '../daemon/lifecycle.js';
import { openForReading, targetOf } from '../db/open.js';
import { readMirrorFacts, type MirrorFacts } from '../db/store/facts.js';
import { createLogger } from '../log.js';
import { createSimulator, V1_ENDPOINTS } from '../simulator/index.js';
import { EXIT, parseCommandArgs, parseIntegerFlag, type Command } from './command.js';
import { createDemoLogStream } from './demo-log.js';
import { createDemoSummary } from './demo-summary.js';
import { packageVersion } from './version.js';

const DEMO_DB = './data/demo.db';

/** How often the demo prints the webhook events that came in. */
const SUMMARY_INTERVAL_MS = 5_000;

/** `transport-sync demo`: the simulator with its mutation driver, and the daemon mirroring it. */
export const demoCommand: Command = {
  name: 'demo',
  summary:
    'The simulator and the daemon against it, into ./data/demo.db; --webhooks-only with the polling API retired',
  usage: `Usage: transport-sync demo [--webhooks-only] [--requests N] [--seed N] [--poll-seconds N] [--db PATH]

Starts the built-in simulator of the service on 127.0.0.1 (it changes requests every few
seconds, as the real service would, and sends a signed webhook for each change), runs the
daemon against it into ${DEMO_DB}, polling and receiving webhooks, and prints queries to try.
--webhooks-only retires the simulator's v1.0 endpoints, as the real service did on 2026-08-12:
the daemon notices and runs on webhooks alone. Needs no credentials. Ctrl-C stops both.
It then prints a line per poll cycle, one every 5 s for the webhook events that came in, one
when schema drift grows, and at the end a summary of what arrived and changed. The daemon's
warnings and errors show on stderr as one short line per message, repeats left out. With
LOG_LEVEL set (LOG_LEVEL=info, say), stderr gets the daemon's log lines instead: JSON, or
readable lines on a terminal, as \`run\` logs.
Exit codes: 0 stopped (Ctrl-C, SIGINT or SIGTERM), 1 the daemon could not start or was ended at
once (a second signal, or a graceful stop past 10 s), 2 bad arguments or configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      requests: { type: 'string' },
      seed: { type: 'string' },
      'poll-seconds': { type: 'string' },
      db: { type: 'string' },
      'webhooks-only': { type: 'boolean' },
    });
    const requests = parseIntegerFlag('requests', values.requests, {
      min: 1,
      max: 200_000,
      fallback: 300,
    });
    const seed = parseIntegerFlag('seed', values.seed, { min: 0, max: 2 ** 31, fallback: 1 });
    const pollSeconds = parseIntegerFlag('poll-seconds', values['poll-seconds'], {
      min: 1,
      max: 59,
      fallback: 5,
    });
    const dbPath = values.db ?? DEMO_DB;
    const isWebhooksOnly = values['webhooks-only'] === true;

    // The simulator signs its webhooks with a key pair of its own; the daemon gets the public key.
    mkdirSync(dirname(resolve(dbPath)), { recursive: true });
    const publicKeyFile = resolve(dirname(resolve(dbPath)), 'demo-webhook-public-key.pem');
    const webhookPort = await freePort();
    // Spread the trips over the default poll window (3 days back, 14 ahead) so most are mirrored.
    const simulator = createSimulator({
      seed,
      requests,
      pastDays: 3,
      futureDays: 14,
      webhooks: { url: `http://127.0.0.1:${webhookPort}/webhooks/`, publicKeyFile },
      ...(isWebhooksOnly && { faults: { gone: [...V1_ENDPOINTS] } }),
    });
    const { url } = await simulator.listen(0, '127.0.0.1');
    simulator.startMutating({ intervalMs: 2_000, perTick: 3 });

    const config = loadConfig({
      env: {
        ...io.env,
        TRANSPORT_AUTH_URL: url,
        TRANSPORT_HUB_URL: url,
        TRANSPORT_BASE_URL: url,
        TRANSPORT_CLIENT_ID: 'demo-client',
        TRANSPORT_CLIENT_SECRET: 'demo-secret',
        TRANSPORT_CLIENT_SECRET_FILE: '',
        TRANSPORT_DB: dbPath,
        TRANSPORT_POLL_CRON: `*/${pollSeconds} * * * * *`,
        TRANSPORT_WEBHOOK_LISTEN: `127.0.0.1:${webhookPort}`,
        TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE: publicKeyFile,
        // The simulator is local: no need to spare it.
        TRANSPORT_RATE_LIMIT_PER_SEC: io.env.TRANSPORT_RATE_LIMIT_PER_SEC ?? '0',
        LOG_LEVEL: io.env.LOG_LEVEL || 'warn',
      },
      needsService: true,
    });
    // The daemon's log lines only when asked for (LOG_LEVEL set); otherwise short lines for a
    // person, and the summary tells what came in.
    const logLines = !io.env.LOG_LEVEL
      ? createDemoLogStream((line) => io.stderr.write(line))
      : null;
    const log = createLogger({ level: config.logLevel, destination: logLines ?? io.stderr });
    const absolute = resolve(dbPath);
    io.stdout.write(demoIntro(url, absolute, isWebhooksOnly));
    const summary = createDemoSummary();
    const daemon = await startDaemon({
      config,
      log,
      version: packageVersion(),
      onCycle: async (result, context) => {
        const facts = await readMirrorFacts(context.db).catch(() => undefined);
        io.stdout.write(summary.cycle(result, facts));
      },
      onWebhook: (outcome) => summary.webhook(outcome),
    });
    const startedAt = Date.now();
    // Every few seconds, one line for the events that came in since the last, and drift if it
    // grew. One tick at a time; the facts are skipped when the database is closing.
    let ticking = Promise.resolve();
    const tick = async () => {
      const facts = await readMirrorFacts(daemon.context.db).catch(() => undefined);
      io.stdout.write(summary.tick(facts));
    };
    const ticker = setInterval(() => (ticking = ticking.then(tick)), SUMMARY_INTERVAL_MS);
    ticker.unref();
    const release = handleSignals(daemon, log);
    await daemon.stopped;
    clearInterval(ticker);
    await ticking;
    release();
    simulator.stopMutating();
    await simulator.close();
    io.stdout.write(summary.tick());
    io.stdout.write(
      summary.final({
        facts: await readFinalFacts(config),
        elapsedMs: Date.now() - startedAt,
        hiddenLogLines: logLines?.hiddenLines() ?? 0,
      }),
    );
    return EXIT.ok;
  },
};

/** The mirror's totals once the daemon has stopped; undefined when it cannot be read. */
async function readFinalFacts(config: Config): Promise<MirrorFacts | undefined> {
  try {
    const db = await openForReading(targetOf(config));
    try {
      return await readMirrorFacts(db);
    } finally {
      await db.close();
    }
  } catch {
    return undefined;
  }
}

/** A port free on 127.0.0.1 now (the receiver takes it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

function demoIntro(url: string, dbPath: string, isWebhooksOnly: boolean): string {
  const queries = [
    'SELECT state, count(*) FROM request_overview GROUP BY state;',
    "SELECT request_id, effective_pickup_time, service_level_type, pickup_city, destination_city FROM request_overview WHERE state = 'accepted' ORDER BY effective_pickup_time LIMIT 10;",
    'SELECT request_id, observed_at, kind, changed_columns, old_state, new_state FROM request_changes ORDER BY change_id DESC LIMIT 10;',
  ];
  return `transport-sync demo
  simulator: ${url} (client id demo-client, secret demo-secret)
  database:  ${dbPath}
  data in:   ${isWebhooksOnly ? 'webhooks alone (the simulator has retired v1.0)' : 'polling and signed webhooks'}

Rows appear and change as the simulator edits requests. Try, in another terminal:
${queries.map((query) => `  sqlite3 ${dbPath} "${query}"`).join('\n')}

or with node, from this folder:
  node -e "const db = require('better-sqlite3')('${dbPath}', { readonly: true }); console.table(db.prepare('${queries[0]!.replace(/'/g, "\\'")}').all())"

Ctrl-C stops the demo.

`;
}
