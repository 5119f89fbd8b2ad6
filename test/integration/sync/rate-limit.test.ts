import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClient } from '../../../src/api/index.js';
import { systemClock } from '../../../src/clock.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { silentLogger } from '../../../src/log.js';
import { createSimulator, type Simulator } from '../../../src/simulator/index.js';
import { createCallTally } from '../../../src/sync/call-tally.js';
import { runPollCycle, type PollDeps } from '../../../src/sync/poll.js';
import { countRows, createMigratedTestDatabase, type TestDatabase } from '../../helpers/engine.js';

/*
 * A service that throttles: the simulator lets 25 API calls a second through and answers the
 * rest 429 with Retry-After. Real time on both sides (the limiter paces by the clock).
 */

const LIMIT = 25;
let sim: Simulator | undefined;
let client: ServiceClient | undefined;
let db: MirrorDb | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  await db?.close();
  await database?.drop();
});

describe('a first sync against a service that throttles', () => {
  it('converges on its rate limit without a storm of 429s, and stores every request', async () => {
    sim = createSimulator({ seed: 5, requests: 400, pastDays: 2, futureDays: 10 });
    sim.setFaults({ rateLimitPerSec: LIMIT });
    const { url } = await sim.listen(0, '127.0.0.1');
    database = await createMigratedTestDatabase();
    db = await openDatabase({ location: database.location });
    const calls = createCallTally();
    // The defaults: no hard cap, concurrency 8; the limiter learns the limit from the 429s.
    client = createServiceClient({
      authUrl: url,
      hubUrl: url,
      baseUrl: url,
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      clock: systemClock,
      concurrency: 8,
      onCall: (event) => calls.record(event),
    });
    const deps: PollDeps = {
      client,
      store: createStore({ db, clock: systemClock }),
      clock: systemClock,
      log: silentLogger(),
      calls,
      settings: {
        windowPastHours: 72,
        windowFutureHours: 336,
        states: ['awaiting', 'accepted', 'completed', 'canceled'],
        concurrency: 8,
        listChunkRequests: 20_000,
      },
    };
    const startedMs = Date.now();
    const result = await runPollCycle(deps);
    const seconds = (Date.now() - startedMs) / 1000;

    expect(result.status).toBe('ok');
    expect(await countRows(db, 'requests')).toBe(result.counts.requestsNew);
    const api = sim.calls.filter((call) => call.endpoint !== 'token');
    const throttled = api.filter((call) => call.status === 429).length;
    const admitted = api.length - throttled;
    const rate = admitted / seconds;
    console.log(
      `throttled service (${LIMIT}/s): ${admitted} calls admitted, ${throttled} answered 429, ${seconds.toFixed(1)} s, ${rate.toFixed(1)}/s`,
    );
    expect(admitted).toBeGreaterThan(100);
    // No storm: the 429s are a small share of what was admitted.
    expect(throttled).toBeLessThan(admitted * 0.15);
    // Converged near the limit: never far above it (the service would not allow it), nor idling
    // far below it.
    expect(rate).toBeLessThanOrEqual(LIMIT * 1.1);
    expect(rate).toBeGreaterThan(LIMIT * 0.5);
  }, 60_000);
});
