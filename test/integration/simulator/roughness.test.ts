import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatorCommand } from '../../../src/cli/simulator.js';
import { isTransportError } from '../../../src/errors.js';
import {
  DEFAULT_ROUGHNESS,
  type MutationSummary,
  type TruthRecord,
} from '../../../src/simulator/index.js';
import {
  call,
  getToken,
  SMOOTH,
  startSimulator,
  T0,
  type Started,
} from '../../helpers/simulator.js';

interface Page {
  page: number;
  pages: number;
  results: Record<string, unknown>[];
}

const DAY = 86_400;
const NOW = T0 / 1000;
const WINDOW = { gte: NOW - 40 * DAY, lte: NOW + 20 * DAY };
const WIDE = `date__gte=${WINDOW.gte}&date__lte=${WINDOW.lte}`;
const UNKNOWN_DETAIL_MEMBERS = ['transport_mileage_estimate', 'requester_department'];

/** What the full list should hold for `state` in WINDOW, by the truth. */
function listed(truth: TruthRecord[], state: string): string[] {
  return truth
    .filter((t) => {
      const at = Date.parse(t.eventDtUtc) / 1000;
      return t.isVisible && t.listState === state && at >= WINDOW.gte && at <= WINDOW.lte;
    })
    .map((t) => t.requestId);
}

describe('simulator paging churn', () => {
  let s: Started;
  const changes: MutationSummary[] = [];
  beforeAll(async () => {
    s = await startSimulator({
      seed: 7,
      requests: 300,
      pageSize: 5,
      roughness: { ...SMOOTH, pagingChurnRate: 1 },
    });
    s.sim.events.on('mutation', (m: MutationSummary) => changes.push(m));
  });
  afterAll(() => s.sim.close());
  afterEach(() => void changes.splice(0));

  const page = async (state: string, n: number) => {
    const reply = await s.api(
      `/openapi/v1.0/request-details/?request__state=${state}&${WIDE}&page=${n}`,
    );
    return reply.status === 200 ? (reply.body as Page) : null;
  };
  const ids = (p: Page | null) => (p?.results ?? []).map((r) => r.request_id as string);

  it('makes a page-by-page pass miss or repeat records compared with the truth at its end', async () => {
    for (const state of ['completed', 'accepted']) {
      const first = await page(state, 1);
      const seen = ids(first);
      for (let n = 2; n <= (first?.pages ?? 1); n += 1) seen.push(...ids(await page(state, n)));
      const truth = listed(s.sim.truth(), state);
      const missing = truth.filter((id) => !seen.includes(id));
      const repeated = seen.length - new Set(seen).size;
      expect(first?.pages, state).toBeGreaterThan(3);
      expect(missing.length + repeated, state).toBeGreaterThan(0);
    }
    // One real change per page after the first, each through the world (truth and events).
    expect(changes.length).toBeGreaterThan(6);
  });

  it('changes the world after the first page when the client has just read the partial list', async () => {
    s.sim.setRoughness({ pagingChurnRate: 0 });
    const before = ids(await page('accepted', 1));
    s.sim.setRoughness({ pagingChurnRate: 1 });
    expect((await s.api(`/openapi/v1.0/requests/?request__state=accepted&${WIDE}`)).status).toBe(
      200,
    );
    expect(changes).toEqual([]);
    const served = ids(await page('accepted', 1));
    // The response was built before the change: the client does not see it there.
    expect(served).toEqual(before);
    expect(changes).toHaveLength(1);
    // Page 1 again without a partial read first is no paging moment; it shows the change.
    const again = ids(await page('accepted', 1));
    expect(changes).toHaveLength(1);
    expect(again).not.toEqual(served);
  });

  it('does nothing at rate 0', async () => {
    s.sim.setRoughness({ pagingChurnRate: 0 });
    await s.api(`/openapi/v1.0/requests/?request__state=completed&${WIDE}`);
    for (let n = 1; n <= 4; n += 1) await page('completed', n);
    expect(changes).toEqual([]);
  });
});

describe('simulator drift over HTTP', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startSimulator({
      seed: 12,
      requests: 80,
      pageSize: 500,
      roughness: { ...SMOOTH, driftRate: 1 },
    });
  });
  afterAll(() => s.sim.close());

  it('serves details with a documented member absent or an unknown one, as truth() says', async () => {
    const visible = s.sim.truth().filter((t) => t.isVisible);
    const bodies: Record<string, unknown>[] = [];
    for (const t of visible) {
      const reply = await s.api(`/openapi/v1.0/requests/${t.requestId}/`);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(t.detail);
      bodies.push(reply.body as Record<string, unknown>);
    }
    expect(bodies.some((b) => !('patient_last_name' in b) || !('facility' in b))).toBe(true);
    expect(bodies.some((b) => UNKNOWN_DETAIL_MEMBERS.some((name) => name in b))).toBe(true);
    expect(JSON.stringify(bodies)).not.toMatch(/"(patient_last_name|facility)":null/);
  });

  it('serves full-list records drifting the same way', async () => {
    const truth = new Map(s.sim.truth().map((t) => [t.requestId, t.detail]));
    const rows = (
      (await s.api(`/openapi/v1.0/request-details/?request__state=completed&${WIDE}`)).body as Page
    ).results;
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      const detail = structuredClone(truth.get(row.request_id as string)) as Record<
        string,
        Record<string, unknown>
      >;
      delete detail.pickup_location?.id;
      delete detail.destination_location?.id;
      expect(row).toEqual(detail);
    }
  });
});

describe('simulator Date header and roughness control', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startSimulator({ seed: 3, requests: 20 });
  });
  afterAll(() => s.sim.close());

  const control = (path: string, method = 'GET', body?: unknown) =>
    call(s.url, `/_sim/${path}`, { method, body });

  it('dates every response by the simulator clock', async () => {
    s.clock.set(T0 + 123_456_789);
    const want = new Date(s.clock.now()).toUTCString();
    expect((await s.api('/openapi/v1.0/requests/')).headers.get('date')).toBe(want);
    expect((await s.api('/openapi/v1.0/requests/NOPE1234/')).headers.get('date')).toBe(want);
    expect((await control('truth/')).headers.get('date')).toBe(want);
    s.clock.set(T0);
  });

  it('GET /_sim/roughness/ reports the settings; POST changes the ones it names', async () => {
    expect((await control('roughness/')).body).toEqual(DEFAULT_ROUGHNESS);
    const reply = await control('roughness/', 'POST', { driftRate: 0, lastUpdated: 'strict' });
    expect(reply.status).toBe(200);
    const want = { ...DEFAULT_ROUGHNESS, driftRate: 0, lastUpdated: 'strict' };
    expect(reply.body).toEqual(want);
    expect(s.sim.getRoughness()).toEqual(want);
    for (const bad of [{ pagingChurnRate: 2 }, { lastUpdated: 'minute' }, { surprise: true }]) {
      expect((await control('roughness/', 'POST', bad)).status, JSON.stringify(bad)).toBe(400);
    }
    expect((await control('roughness/', 'POST', 'not json')).status).toBe(400);
    expect((await control('roughness')).body).toEqual(want);
  });
});

describe('transport-sync simulator roughness flags', () => {
  const io = () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    return { io: { stdout, stderr: new PassThrough(), env: {} }, output: () => out };
  };

  it('sets the roughness from the flags', async () => {
    let stop = () => undefined as void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const { io: cli, output } = io();
    const argv = ['--port', '0', '--requests', '5', '--strict-last-updated'];
    argv.push('--paging-churn', '0', '--drift-rate', '0.5', '--double-edit-rate', '0');
    const running = createSimulatorCommand(() => stopped).run(argv, cli);
    for (let i = 0; i < 100 && !output().includes('\n'); i += 1)
      await new Promise((r) => setTimeout(r, 10));
    const url = /listening on (http:\/\/\S+)/.exec(output())?.[1] as string;
    await getToken(url);
    expect((await call(url, '/_sim/roughness/')).body).toEqual({
      lastUpdated: 'strict',
      pagingChurnRate: 0,
      driftRate: 0.5,
      doubleEditRate: 0,
    });
    stop();
    expect(await running).toBe(0);
  });

  it('refuses bad roughness values with a usage error', async () => {
    for (const argv of [
      ['--paging-churn', '2'],
      ['--drift-rate', 'x'],
      ['--double-edit-rate', '-0.1'],
      ['--drift-rate', ''],
      ['--strict-last-updated=yes'],
    ]) {
      const error = await createSimulatorCommand(async () => undefined)
        .run(argv, io().io)
        .catch((e: unknown) => e);
      expect(isTransportError(error, 'cli.usage'), argv.join(' ')).toBe(true);
    }
  });
});
