import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransportError } from '../../../src/errors.js';
import { createSimulatorCommand } from '../../../src/cli/simulator.js';
import {
  createSimulator,
  type MutationSummary,
  type TruthRecord,
} from '../../../src/simulator/index.js';
import { call, getToken, startSimulator, type Started } from '../../helpers/simulator.js';

describe('simulator control endpoints', () => {
  let s: Started;
  beforeAll(async () => {
    // No double edits: POST /_sim/mutate/?count=N then answers exactly N summaries.
    s = await startSimulator({ seed: 21, requests: 40, roughness: { doubleEditRate: 0 } });
  });
  afterAll(() => s.sim.close());

  const control = (path: string, method = 'GET', body?: unknown) =>
    call(s.url, `/_sim/${path}`, { method, body });

  it('GET /_sim/truth/ serves truth() and is not recorded as a call', async () => {
    s.sim.resetCalls();
    const reply = await control('truth/');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(JSON.parse(JSON.stringify(s.sim.truth())));
    expect(s.sim.calls).toEqual([]);
  });

  it('GET /_sim/calls/ lists API calls; POST /_sim/reset-calls/ empties them', async () => {
    await s.api('/openapi/v1.0/requests/');
    const calls = (await control('calls/')).body as { endpoint: string }[];
    expect(calls.map((c) => c.endpoint)).toEqual(['list']);
    expect((await control('reset-calls/', 'POST')).status).toBe(200);
    expect((await control('calls')).body).toEqual([]);
  });

  it('POST /_sim/mutate/?count=N applies N mutations', async () => {
    const before = s.sim.truth();
    const reply = await control('mutate/?count=5', 'POST');
    const summaries = reply.body as MutationSummary[];
    expect(summaries).toHaveLength(5);
    const after = new Map(s.sim.truth().map((t) => [t.requestId, t]));
    for (const m of summaries)
      expect(after.get(m.requestId)?.lastUpdatedTimestampUtc).toBeDefined();
    expect(s.sim.truth()).not.toEqual(before);
    expect((await control('mutate/?count=-1', 'POST')).status).toBe(400);
  });

  it('POST /_sim/faults/ replaces the faults, and refuses invalid ones', async () => {
    expect((await control('faults/', 'POST', { gone: ['details_list'] })).status).toBe(200);
    expect((await s.api('/openapi/v1.0/request-details/')).status).toBe(410);
    expect((await control('faults/')).body).toEqual({ gone: ['details_list'] });
    expect((await control('faults/', 'POST', { errorRate: 7 })).status).toBe(400);
    expect((await control('faults/', 'POST', { surprise: true })).status).toBe(400);
    expect((await control('faults/', 'POST', {})).status).toBe(200);
    expect((await s.api('/openapi/v1.0/request-details/')).status).toBe(200);
  });

  it('GET /_sim/actions/ and /_sim/tokens/ report actions and issued tokens', async () => {
    const ids = (await control('requests/?count=1&state=awaiting', 'POST')).body as string[];
    expect(ids).toHaveLength(1);
    await s.api(`/openapi/v2.0/requests/${ids[0]}/accept/`, { method: 'PUT', body: {} });
    expect((await control('actions/')).body).toMatchObject([{ kind: 'accept', requestId: ids[0] }]);
    expect((await control('tokens/')).body).toContain(s.token);
  });

  it('POST /_sim/world/ makes a specific mutation', async () => {
    const id = s.sim.truth().find((t) => t.isVisible)?.requestId as string;
    const reply = await control('world/', 'POST', { op: 'makeUnavailable', id, value: 'expired' });
    expect(reply.body).toMatchObject({
      kind: 'unavailable',
      requestId: id,
      isVisible: false,
      reason: 'expired',
    });
    expect((await s.api(`/openapi/v1.0/requests/${id}/`)).status).toBe(403);
    const agreed = await control('world/', 'POST', {
      op: 'setAgreedTime',
      id,
      value: '2025-06-20T09:30:00Z',
    });
    expect(agreed.status).toBe(200);
    const truth = s.sim.truth().find((t) => t.requestId === id) as TruthRecord;
    expect(truth.eventDtUtc).toBe('2025-06-20T09:30:00.000Z');
    expect(
      (await control('world/', 'POST', { op: 'setAgreedTime', id, value: 'someday' })).status,
    ).toBe(400);
    expect(
      (await control('world/', 'POST', { op: 'setState', id: 'NOPE', value: 'accepted' })).status,
    ).toBe(404);
    expect((await control('world/', 'POST', { op: 'explode', id })).status).toBe(400);
  });

  it('answers 404 for an unknown control path', async () => {
    expect((await control('nothing/')).status).toBe(404);
  });
});

describe('simulator lifecycle', () => {
  it('close() ends open keep-alive connections promptly', async () => {
    const sim = createSimulator({ requests: 5 });
    const { url } = await sim.listen();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.url).toBe(url);
    await getToken(url); // leaves a keep-alive socket open in fetch's pool
    const started = performance.now();
    await sim.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(sim.url).toBeUndefined();
    await expect(fetch(`${url}/_sim/truth/`)).rejects.toThrow();
  });

  it('startMutating applies mutations on a timer until stopped', async () => {
    const sim = createSimulator({ requests: 20 });
    const seen: MutationSummary[] = [];
    sim.events.on('mutation', (m: MutationSummary) => seen.push(m));
    sim.startMutating({ intervalMs: 10, perTick: 2 });
    await new Promise((resolve) => setTimeout(resolve, 80));
    sim.stopMutating();
    const count = seen.length;
    expect(count).toBeGreaterThanOrEqual(4);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(seen.length).toBe(count);
    await sim.close();
  });
});

describe('transport-sync simulator command', () => {
  const io = () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    return { io: { stdout, stderr, env: {} }, output: () => out };
  };

  it('serves until stopped, printing the URL and the demo credentials', async () => {
    let stop = () => undefined as void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const { io: cli, output } = io();
    const running = createSimulatorCommand(() => stopped).run(
      [
        '--port',
        '0',
        '--requests',
        '15',
        '--seed',
        '4',
        '--page-size',
        '5',
        '--mutate-every',
        '50',
      ],
      cli,
    );
    for (let i = 0; i < 100 && !output().includes('\n'); i += 1)
      await new Promise((r) => setTimeout(r, 10));
    const url = /listening on (http:\/\/\S+)/.exec(output())?.[1] as string;
    expect(output()).toContain('client id demo-client, secret demo-secret');
    const token = await getToken(url);
    const page = await call(
      url,
      '/openapi/v1.0/request-details/?date__gte=0&date__lte=9999999999&request__state=completed',
      { token },
    );
    expect(page.status).toBe(200);
    expect((page.body as { results: unknown[] }).results.length).toBeLessThanOrEqual(5);
    stop();
    expect(await running).toBe(0);
    expect(output()).toContain('simulator stopped');
    await expect(fetch(`${url}/_sim/truth/`)).rejects.toThrow();
  });

  it('refuses bad flags with a usage error', async () => {
    for (const argv of [
      ['--port', 'abc'],
      ['--fault-rate', '2'],
      ['--requests', '-1'],
      ['--bogus'],
    ]) {
      const error = await createSimulatorCommand(async () => undefined)
        .run(argv, io().io)
        .catch((e: unknown) => e);
      expect(isTransportError(error, 'cli.usage'), argv.join(' ')).toBe(true);
    }
  });
});
