import {
  createServiceClient,
  type ServiceClient,
  type ServiceClientOptions,
} from '../../src/api/index.js';
import { openDatabase, type MirrorDb } from '../../src/db/open.js';
import { createStore, type Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/log.js';
import {
  createSimulator,
  type Simulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { createCallTally, type CallTally } from '../../src/sync/call-tally.js';
import { runPollCycle, type PollDeps } from '../../src/sync/poll.js';
import { manualClock, type ManualClock } from './simulator.js';
import { createMigratedTestDatabase } from './engine.js';

/**
 * The simulator on loopback, a real database of the project's engine (a SQLite file, or a fresh
 * PostgreSQL database) and the real client, sharing one manual clock.
 */
export interface MirrorFixture {
  sim: Simulator;
  clock: ManualClock;
  db: MirrorDb;
  store: Store;
  client: ServiceClient;
  calls: CallTally;
  deps: PollDeps;
  /** TRANSPORT_DB of this fixture: the file path, or the postgres:// URL. */
  dbPath: string;
  cycle: (signal?: AbortSignal) => ReturnType<typeof runPollCycle>;
  /** Another client of the same service, clock and tally, with `overrides`; closed by close(). */
  connect(overrides?: Partial<ServiceClientOptions>): ServiceClient;
  close(): Promise<void>;
}

/** Starts a fixture; `settings` override the poll settings. */
export async function startMirror(
  options: SimulatorOptions & {
    settings?: Partial<PollDeps['settings']>;
    /** An existing TRANSPORT_DB to open (default: a fresh database, dropped at close). */
    dbPath?: string;
    /** Points the client elsewhere (e.g. a proxy in front of the simulator) */
    serviceUrl?: (simulatorUrl: string) => Promise<string>;
    /** Overrides of the client's options (timeouts, retry policy). */
    clientOptions?: Partial<ServiceClientOptions>;
    /** A clock of the simulator's own, to make its time (token expiry) differ from ours. */
    simulatorClock?: ManualClock;
  } = {},
): Promise<MirrorFixture> {
  const clock = manualClock();
  const {
    settings,
    dbPath: givenPath,
    serviceUrl,
    clientOptions,
    simulatorClock,
    ...simOptions
  } = options;
  const sim = createSimulator({
    seed: 7,
    requests: 120,
    pastDays: 2,
    futureDays: 10,
    clock: simulatorClock ?? clock,
    ...simOptions,
  });
  const { url: simulatorUrl } = await sim.listen(0, '127.0.0.1');
  const url = serviceUrl ? await serviceUrl(simulatorUrl) : simulatorUrl;
  const fresh = givenPath === undefined ? await createMigratedTestDatabase() : undefined;
  const dbPath = givenPath ?? fresh!.location;
  const db = await openDatabase({ location: dbPath });
  const store = createStore({ db, clock });
  const calls = createCallTally();
  const clients: ServiceClient[] = [];
  const connect = (overrides: Partial<ServiceClientOptions> = {}) => {
    const connected = createServiceClient({
      authUrl: url,
      hubUrl: url,
      baseUrl: url,
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      clock,
      rateLimitPerSec: 0,
      concurrency: 8,
      onCall: (event) => calls.record(event),
      ...clientOptions,
      ...overrides,
    });
    clients.push(connected);
    return connected;
  };
  const client = connect();
  const deps: PollDeps = {
    client,
    store,
    clock,
    log: silentLogger(),
    calls,
    settings: {
      windowPastHours: 72,
      windowFutureHours: 336,
      states: ['awaiting', 'accepted', 'completed', 'canceled'],
      concurrency: 8,
      listChunkRequests: 20_000,
      ...settings,
    },
  };
  return {
    sim,
    clock,
    db,
    store,
    client,
    calls,
    deps,
    dbPath,
    cycle: (signal) => runPollCycle(deps, signal),
    connect,
    async close() {
      for (const connected of clients) await connected.close();
      await sim.close();
      await db.close();
      await fresh?.drop();
    },
  };
}
