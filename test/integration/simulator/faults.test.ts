import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FaultOptions } from '../../../src/simulator/index.js';
import { call, startSimulator, T0, type Started } from '../../helpers/simulator.js';

const LIST = '/openapi/v1.0/requests/';

describe('simulator faults', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startSimulator({ seed: 5, requests: 30 });
  });
  afterAll(() => s.sim.close());
  beforeEach(() => {
    s.sim.setFaults({});
    s.sim.setLatency(0);
    s.sim.resetCalls();
  });

  it('errorRate answers 500, 502 (an HTML gateway page) or 503', async () => {
    s.sim.setFaults({ errorRate: 1 });
    const replies = await Promise.all(Array.from({ length: 30 }, () => s.api(LIST)));
    const statuses = new Set(replies.map((r) => r.status));
    expect([...statuses].every((code) => [500, 502, 503].includes(code))).toBe(true);
    expect(statuses.size).toBeGreaterThan(1);
    const gateway = replies.find((r) => r.status === 502);
    expect(gateway?.headers.get('content-type')).toBe('text/html');
    expect(gateway?.text).toContain('502 Bad Gateway');
    expect(s.sim.calls.every((c) => c.fault === 'error')).toBe(true);
  });

  it('rateLimitRate answers 429 with Retry-After in seconds, sometimes as an HTTP-date', async () => {
    s.sim.setFaults({ rateLimitRate: 1, retryAfterSec: 3 });
    const replies = await Promise.all(Array.from({ length: 40 }, () => s.api(LIST)));
    expect(replies.every((r) => r.status === 429)).toBe(true);
    const values = replies.map((r) => r.headers.get('retry-after') ?? '');
    expect(values).toContain('3');
    const dates = values.filter((v) => v !== '3');
    expect(dates.length).toBeGreaterThan(0);
    for (const date of dates) expect(Date.parse(date)).toBe(T0 + 3000);
  });

  it('dropRate destroys the connection without an answer, after the action took effect', async () => {
    const [id] = s.sim.addRequests(1, { state: 'awaiting' });
    s.sim.setFaults({ dropRate: 1 });
    await expect(
      fetch(`${s.url}/openapi/v2.0/requests/${id}/accept/`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
        body: '{}',
      }),
    ).rejects.toThrow();
    expect(s.sim.calls.at(-1)).toMatchObject({ endpoint: 'accept', status: 0, fault: 'drop' });
    expect(s.sim.truth().find((t) => t.requestId === id)?.listState).toBe('accepted');
  });

  it('truncateRate sends the status and full Content-Length but only half the body', async () => {
    s.sim.setFaults({ truncateRate: 1 });
    const res = await fetch(
      `${s.url}${LIST}?date__gte=0&date__lte=9999999999&request__state=completed`,
      {
        headers: { authorization: `Bearer ${s.token}` },
      },
    );
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(100);
    await expect(res.text()).rejects.toThrow();
    expect(s.sim.calls.at(-1)).toMatchObject({ status: 200, fault: 'truncate' });
  });

  it('tokenOutage answers 503 at the token endpoint only', async () => {
    s.sim.setFaults({ tokenOutage: true });
    const reply = await call(s.url, '/v2.0/oauth2/token/', {
      method: 'POST',
      body: 'client_id=demo-client&client_secret=demo-secret&grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ error: 'temporarily_unavailable' });
    expect((await s.api(LIST)).status).toBe(200);
  });

  it('gone answers 410 for a whole endpoint, with or without a token', async () => {
    s.sim.setFaults({ gone: ['list'] });
    const reply = await s.api(LIST);
    expect(reply.status).toBe(410);
    expect(reply.body).toMatchObject({ code: 'common:gone' });
    expect((await call(s.url, LIST)).status).toBe(410);
    expect((await s.api('/openapi/v1.0/request-details/')).status).toBe(200);
  });

  it('endpoints limits random faults to the named endpoints', async () => {
    s.sim.setFaults({ errorRate: 1, endpoints: ['detail'] });
    expect((await s.api(LIST)).status).toBe(200);
    const id = s.sim.truth().find((t) => t.isVisible)?.requestId;
    expect((await s.api(`/openapi/v1.0/requests/${id}/`)).status).toBeGreaterThanOrEqual(500);
  });

  it('slowMs and latency delay answers', async () => {
    s.sim.setFaults({ slowMs: 150 });
    let started = performance.now();
    await s.api(LIST);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    s.sim.setFaults({});
    s.sim.setLatency(100);
    started = performance.now();
    await s.api(LIST);
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('decides faults reproducibly from the seed', async () => {
    const run = async () => {
      const other = await startSimulator({ seed: 9, requests: 10 });
      const faults: FaultOptions = { errorRate: 0.2, rateLimitRate: 0.2 };
      other.sim.setFaults(faults);
      for (let i = 0; i < 25; i += 1) await other.api(LIST);
      const seen = other.sim.calls.map((c) => c.fault ?? '-').join(',');
      await other.sim.close();
      return seen;
    };
    const first = await run();
    expect(first).toMatch(/error/);
    expect(first).toMatch(/rate_limit/);
    expect(await run()).toBe(first);
  });

  it('rejects invalid fault settings', () => {
    expect(() => s.sim.setFaults({ errorRate: 2 })).toThrow();
    expect(() => s.sim.setFaults({ endpoints: ['nope' as 'list'] })).toThrow();
  });
});
