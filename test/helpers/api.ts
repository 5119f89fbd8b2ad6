import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { TransportError } from '../../src/errors.js';
import { Writable } from 'node:stream';
import { createServiceClient, type ServiceClientOptions } from '../../src/api/index.js';
import { createLogger, type Logger } from '../../src/log.js';
import {
  AUTH,
  BASE,
  CLIENT_ID,
  CLIENT_SECRET,
  createFakeClock,
  HUB,
  TOKEN,
  type FakeClock,
} from './service-fixtures.js';

export * from './service-fixtures.js';

// Importing nock switches its interception on for the whole process. Vitest's workers run their
// files one after another in one module graph (isolate: false), so a file that takes only a
// helper from here would leave every later file of its worker on nock's sockets, real loopback
// servers included (through nock's passthrough). Interception is on only inside useNock().
if (nock.isActive()) nock.restore();

/** A client on the test bases with a fake clock, mid-range jitter and no rate limit. */
export function makeClient(overrides: Partial<ServiceClientOptions> = {}) {
  const clock = (overrides.clock as FakeClock | undefined) ?? createFakeClock();
  const client = createServiceClient({
    authUrl: AUTH,
    hubUrl: HUB,
    baseUrl: BASE,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    clock,
    random: () => 0.5,
    rateLimitPerSec: 0,
    ...overrides,
  });
  return { client, clock };
}

/** Expects `times` token requests answering `token` with `expiresIn` seconds. */
export function mockToken(token = TOKEN, expiresIn = 3600, times = 1): nock.Scope {
  return nock(AUTH)
    .post('/v2.0/oauth2/token/')
    .times(times)
    .reply(200, { access_token: token, token_type: 'bearer', expires_in: expiresIn });
}

/** The hub (v2.0 actions) interceptor scope; paths carry the `/api` prefix. */
/**
 * A socket error as node:http raises it, for nock's `replyWithError`: an Error with a code (nock
 * hands a plain object to an http request as nothing at all).
 */
export const socketError = (code: string, message = 'boom'): Error =>
  Object.assign(new Error(message), { code });

export const hub = () => nock('https://hub.example');
/** The base (v1.0 reads) interceptor scope; paths carry the `/svc` prefix. */
export const base = () => nock('https://base.example');

/** A logger at `trace` whose every line is kept in `lines`. */
export function captureLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { log: createLogger({ level: 'trace', destination }), lines };
}

/**
 * nock for this test file: on for its tests, the network refused during each, and off after the
 * file. Test files share their worker's modules (vitest.config.ts): nock left on would sit in
 * front of the next file's fetch.
 */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
  });
  beforeEach(() => nock.disableNetConnect());
  afterEach(() => resetNock());
  afterAll(() => nock.restore());
}

/** Forgets every interceptor and lets the network through again. */
function resetNock(): void {
  nock.cleanAll();
  nock.enableNetConnect();
}

/** The TransportError a promise rejects with; fails the test if it resolves. */
export async function caught(promise: Promise<unknown>): Promise<TransportError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TransportError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}
