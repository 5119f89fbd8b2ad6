import { existsSync } from 'node:fs';
import { TransportError } from '../errors.js';
import { createLogger } from '../log.js';
import {
  createSimulator,
  V1_ENDPOINTS,
  DEFAULT_ROUGHNESS,
  type Roughness,
} from '../simulator/index.js';
import {
  EXIT,
  parseCommandArgs,
  parseIntegerFlag,
  usageError,
  type CliIo,
  type Command,
} from './command.js';

const USAGE = `Usage: transport-sync simulator [--port N] [--requests N] [--seed N] ...

Runs the built-in simulator of the transport-request service until Ctrl-C (SIGINT or SIGTERM).
One URL serves as auth_url, hub_url and base_url. Client id demo-client, secret demo-secret.
Control endpoints for tests: GET /_sim/truth/, /_sim/calls/, /_sim/actions/, /_sim/roughness/;
POST /_sim/mutate/?count=N, /_sim/stop-mutating/, /_sim/faults/ (JSON), /_sim/roughness/ (JSON),
/_sim/reset-calls/.

By default the simulator is at least as rough as the real service: last_updated is written to
the second, records move while a client pages, some records drift from the documented shape and
some edits come twice in the same second. The last four options below turn each of these off.

Options:
  --port N             port to listen on (default 8080; 0 picks a free one)
  --host H             address to listen on (default 127.0.0.1)
  --requests N         requests generated at start (default 200)
  --seed N             seed of all randomness (default 1)
  --page-size N        full-list page size (default 50)
  --token-ttl SECONDS  access token lifetime (default 3600)
  --mutate-every MS    apply random mutations every MS milliseconds (default 0: off)
  --mutate-per-tick N  mutations per tick (default 3)
  --latency MS         added to every API response (default 0)
  --fault-rate F       share of API calls, 0 to 1, that fail: split evenly between 5xx, 429,
                       dropped connections and truncated bodies (default 0)
  --webhook-url URL    send a signed v2.0 webhook for every change to this receiver (e.g. the
                       daemon's TRANSPORT_WEBHOOK_LISTEN address and TRANSPORT_WEBHOOK_PATH),
                       retried as the service does: at once, after 8 s and after 64 s
  --webhook-retry-delays-ms LIST
                       the wait before each attempt, in milliseconds, comma-separated (default
                       0,8000,64000, the service's schedule); tests that play an outage at a
                       faster pace scale it down, e.g. 0,2000,16000 for a quarter
  --webhook-public-key-file FILE
                       where to write the public key (PEM) of the key pair generated to sign
                       them; required with --webhook-url (TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE)
  --webhook-ca-file FILE
                       trust an https receiver's certificate through this CA (PEM; a self-signed
                       certificate is its own CA), read again for each new connection
  --strict-last-updated
                       move last_updated forward on every change, even within one second
                       (default: written to the second, as the real service does)
  --paging-churn RATE  chance, 0 to 1, that a record moves at each page of a full-list read
                       (default 0.3; 0 turns it off)
  --drift-rate RATE    share of requests, 0 to 1, whose records lack a documented member, carry
                       an undocumented one, or send webhook flags as "Yes"/"No" (default 0.1)
  --double-edit-rate RATE
                       chance, 0 to 1, that a random edit comes twice in the same instant
                       (default 0.3)
  --retire-v1          answer 410 on every v1.0 endpoint (lists, detail, v1.0 location
                       update, account), as the real service has since 2026-08-12

Exit codes: 0 stopped (SIGINT or SIGTERM), 1 it cannot listen on the address and port, 2 bad
arguments (nothing starts).`;

/** Resolves when the process is asked to stop (SIGINT or SIGTERM). */
function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function parseRate(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const rate = Number(value);
  if (value.trim() === '' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw usageError(`--${name} must be a number from 0 to 1, got "${value}"`);
  }
  return rate;
}

function parseWebhookFlags(
  url: string | undefined,
  publicKeyFile: string | undefined,
  caFile: string | undefined,
): { url: string; publicKeyFile: string; caFile?: string } | undefined {
  if (url === undefined && publicKeyFile === undefined) {
    if (caFile !== undefined) throw usageError('--webhook-ca-file needs --webhook-url');
    return undefined;
  }
  const urls = (url ?? '').split(',');
  if (!url || urls.some((part) => !/^https?:\/\/[^\s]+$/.test(part) || !URL.canParse(part))) {
    throw usageError(
      `--webhook-url must be an http(s) URL, or several comma-separated, got "${url ?? ''}"`,
    );
  }
  if (!publicKeyFile) {
    throw usageError(
      '--webhook-url needs --webhook-public-key-file',
      'the receiver verifies signatures with the public key written there',
    );
  }
  if (caFile !== undefined) {
    if (!url.startsWith('https:'))
      throw usageError('--webhook-ca-file needs an https --webhook-url');
    if (!existsSync(caFile)) throw usageError(`--webhook-ca-file: no such file "${caFile}"`);
    return { url, publicKeyFile, caFile };
  }
  return { url, publicKeyFile };
}

/** Most attempts a retry schedule may have; the service makes three. */
const MOST_ATTEMPTS = 10;

/** The `--webhook-retry-delays-ms` list: whole milliseconds, up to an hour each. */
function parseRetryDelays(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(',').map((part) => part.trim());
  const isValid =
    parts.length <= MOST_ATTEMPTS &&
    parts.every((part) => /^\d+$/.test(part) && Number(part) <= 3_600_000);
  if (!isValid) {
    throw usageError(
      `--webhook-retry-delays-ms must be 1 to ${MOST_ATTEMPTS} comma-separated whole milliseconds, each up to 3600000, got "${value}"`,
      'for example 0,8000,64000 (the service: at once, after 8 s, after 64 s)',
    );
  }
  return parts.map(Number);
}

/** Builds the command; `waitForStop` is injectable so tests can stop it without a signal. */
export function createSimulatorCommand(waitForStop: () => Promise<void> = waitForSignal): Command {
  return {
    name: 'simulator',
    summary: 'The built-in simulator of the service, alone (help simulator lists its options)',
    usage: USAGE,
    async run(argv: string[], io: CliIo) {
      const { values } = parseCommandArgs(argv, {
        port: { type: 'string' },
        host: { type: 'string' },
        requests: { type: 'string' },
        seed: { type: 'string' },
        'page-size': { type: 'string' },
        'token-ttl': { type: 'string' },
        'mutate-every': { type: 'string' },
        'mutate-per-tick': { type: 'string' },
        latency: { type: 'string' },
        'fault-rate': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-public-key-file': { type: 'string' },
        'webhook-ca-file': { type: 'string' },
        'webhook-retry-delays-ms': { type: 'string' },
        'strict-last-updated': { type: 'boolean' },
        'paging-churn': { type: 'string' },
        'drift-rate': { type: 'string' },
        'double-edit-rate': { type: 'string' },
        'retire-v1': { type: 'boolean' },
      });
      const int = (name: string, min: number, max: number, fallback: number) => {
        const raw = values[name as keyof typeof values];
        return parseIntegerFlag(name, typeof raw === 'string' ? raw : undefined, {
          min,
          max,
          fallback,
        });
      };
      const port = int('port', 0, 65_535, 8080);
      const requests = int('requests', 0, 200_000, 200);
      const seed = int('seed', 0, 2 ** 31, 1);
      const pageSize = int('page-size', 1, 10_000, 50);
      const tokenTtlSec = int('token-ttl', 1, 86_400 * 30, 3600);
      const mutateEvery = int('mutate-every', 0, 3_600_000, 0);
      const perTick = int('mutate-per-tick', 1, 10_000, 3);
      const latencyMs = int('latency', 0, 600_000, 0);
      const faultRate = parseRate('fault-rate', values['fault-rate'], 0);
      const roughness = {
        lastUpdated: values['strict-last-updated'] ? 'strict' : DEFAULT_ROUGHNESS.lastUpdated,
        pagingChurnRate: parseRate(
          'paging-churn',
          values['paging-churn'],
          DEFAULT_ROUGHNESS.pagingChurnRate,
        ),
        driftRate: parseRate('drift-rate', values['drift-rate'], DEFAULT_ROUGHNESS.driftRate),
        doubleEditRate: parseRate(
          'double-edit-rate',
          values['double-edit-rate'],
          DEFAULT_ROUGHNESS.doubleEditRate,
        ),
      } satisfies Roughness;
      const host = values.host ?? '127.0.0.1';
      if (host.trim() === '') throw usageError('--host must not be empty');
      const webhooks = parseWebhookFlags(
        values['webhook-url'],
        values['webhook-public-key-file'],
        values['webhook-ca-file'],
      );
      const retryDelaysMs = parseRetryDelays(values['webhook-retry-delays-ms']);
      if (retryDelaysMs && !webhooks) {
        throw usageError('--webhook-retry-delays-ms needs --webhook-url');
      }

      const share = faultRate / 4;
      const simulator = createSimulator({
        seed,
        requests,
        pageSize,
        tokenTtlSec,
        latencyMs,
        faults: {
          errorRate: share,
          rateLimitRate: share,
          dropRate: share,
          truncateRate: share,
          ...(values['retire-v1'] && { gone: [...V1_ENDPOINTS] }),
        },
        roughness,
        webhooks: webhooks && { ...webhooks, ...(retryDelaysMs && { retryDelaysMs }) },
        log: createLogger({ level: io.env.LOG_LEVEL ?? 'warn', destination: io.stderr }),
      });
      const { url } = await simulator.listen(port, host).catch((error: unknown) => {
        throw new TransportError({
          code: 'simulator.listen_failed',
          message: `cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`,
          hint: 'choose another --port (0 picks a free one) or stop what is using it',
          cause: error,
        });
      });
      if (mutateEvery > 0) simulator.startMutating({ intervalMs: mutateEvery, perTick });
      io.stdout.write(
        `simulator listening on ${url} (client id demo-client, secret demo-secret; seed ${seed}, ${requests} requests)\n`,
      );
      if (webhooks) {
        io.stdout.write(
          `sending webhooks to ${webhooks.url}; public key written to ${webhooks.publicKeyFile}` +
            // A schedule other than the service's says so: a test's pace is not the service's.
            (retryDelaysMs ? `; waits before each attempt: ${retryDelaysMs.join(', ')} ms` : '') +
            '\n',
        );
      }
      await waitForStop();
      await simulator.close();
      io.stdout.write('simulator stopped\n');
      return EXIT.ok;
    },
  };
}

/** `transport-sync simulator`: the built-in service simulator as a standalone server. */
export const simulatorCommand: Command = createSimulatorCommand();
