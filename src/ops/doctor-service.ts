import { createServiceClient } from '../api/index.js';
import { createHttp, type HttpClient } from '../api/http.js';
import { createTokenManager } from '../api/token.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config/index.js';
import { describeError, TransportError } from '../errors.js';
import { silentLogger } from '../log.js';
import type { CheckResult } from './doctor.js';
import { NO_INTAKE_HINT } from './mode.js';

/** A doctor answers within seconds: one retry, short timeouts. */
const QUICK = {
  retry: { maxAttempts: 2, maxTotalMs: 10_000, baseDelayMs: 200, maxDelayMs: 1000 },
  timeouts: { connectMs: 5000, headersMs: 10_000, bodyMs: 10_000, attemptMs: 10_000 },
};

/** Clock differences beyond this are worth a warning: windows and action timestamps shift. */
export const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * The service checks: a token from the token endpoint, one small list call, and the clock
 * against the Date header the token endpoint answered with. Each failure says what to do.
 */
export async function checkService(
  config: Config,
  now: () => number = Date.now,
): Promise<CheckResult[]> {
  const clock = { ...systemClock, now };
  const log = silentLogger();
  const http = createHttp({ clock, log, rateLimitPerSec: 0, concurrency: 1, ...QUICK });
  let serverDate: { serverMs: number; localMs: number } | undefined;
  // Keep the Date header of the token response: the clock check needs no call of its own.
  const recording: HttpClient = {
    ...http,
    async request(req) {
      const sentMs = now();
      const res = await http.request(req);
      const serverMs = Date.parse(res.headers.get('date') ?? '');
      if (Number.isFinite(serverMs)) serverDate = { serverMs, localMs: (sentMs + now()) / 2 };
      return res;
    },
  };
  const results: CheckResult[] = [];
  try {
    const tokens = createTokenManager({ ...config, http: recording, clock, log });
    await tokens.getToken();
    results.push({ name: 'token endpoint', status: 'ok', detail: config.authUrl });
  } catch (error) {
    results.push(failure('token endpoint', error, `TRANSPORT_AUTH_URL is ${config.authUrl}`));
    results.push({ name: 'list call', status: 'skip', detail: 'no token' });
    results.push(clockCheck(serverDate, 'no answer from the service to compare with'));
    await http.close();
    return results;
  }
  await http.close();
  results.push(await checkList(config, clock));
  results.push(clockCheck(serverDate));
  return results;
}

async function checkList(config: Config, clock: typeof systemClock): Promise<CheckResult> {
  if (config.pollMode === 'off')
    return { name: 'list call', status: 'skip', detail: 'polling is off (TRANSPORT_POLL=off)' };
  const client = createServiceClient({ ...config, clock, rateLimitPerSec: 0, ...QUICK });
  const state = config.states.find((candidate) => candidate !== 'awaiting') ?? 'accepted';
  try {
    const to = clock.now();
    const { items } = await client.listRequests({ from: to - 3_600_000, to, state });
    return {
      name: 'list call',
      status: 'ok',
      detail: `${items.length} ${state} requests in the last hour`,
    };
  } catch (error) {
    // The service retired v1.0 on 2026-08-12: with auto, the daemon then runs on webhooks alone,
    // which is no fault where a receiver is configured (the intake check covers one that is not).
    if (isEndpointGone(error) && config.pollMode === 'auto') {
      return config.webhookListen
        ? {
            name: 'list call',
            status: 'ok',
            detail: `the v1.0 list endpoint is retired (404/410): TRANSPORT_POLL=auto runs on webhooks alone`,
          }
        : {
            name: 'list call',
            status: 'fail',
            detail: `the v1.0 list endpoint is retired (404/410) and no webhook receiver is configured: nothing can bring data in`,
            hint: NO_INTAKE_HINT,
          };
    }
    return failure('list call', error, `TRANSPORT_BASE_URL is ${config.baseUrl}`);
  } finally {
    await client.close();
  }
}

function clockCheck(
  date: { serverMs: number; localMs: number } | undefined,
  missing = 'the service sent no Date header',
): CheckResult {
  if (!date) return { name: 'clock', status: 'skip', detail: missing };
  // The header has whole seconds: up to a second of the difference is its rounding.
  const skewMs = date.localMs - date.serverMs;
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  const detail = `${seconds} s ${skewMs > 0 ? 'ahead of' : 'behind'} the service's clock`;
  if (Math.abs(skewMs) <= MAX_CLOCK_SKEW_MS) return { name: 'clock', status: 'ok', detail };
  return {
    name: 'clock',
    status: 'warn',
    detail,
    hint: 'Turn on time synchronization (`timedatectl set-ntp true`, chrony or systemd-timesyncd): poll windows and the times sent with actions depend on it.',
  };
}

function isEndpointGone(error: unknown): boolean {
  return error instanceof TransportError && error.code === 'api.endpoint_gone';
}

function failure(name: string, error: unknown, context: string): CheckResult {
  const hint = error instanceof TransportError ? error.hint : undefined;
  return {
    name,
    status: 'fail',
    detail: `${describeError(error).message} (${context})`,
    hint: hint ?? 'Check the URL and network access to the service.',
  };
}
