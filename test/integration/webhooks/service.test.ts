import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/db/store.js';
import { createLogger } from '../../../src/log.js';
import { toEventRow } from '../../../src/webhooks/envelope.js';
import { queryAll, queryOne } from '../../helpers/engine.js';
import { tempDir } from '../../helpers/records.js';
import { truthInWindow } from '../../helpers/truth.js';
import { startWebhookService } from '../../helpers/webhook-service.js';
import {
  deliver,
  startWebhookFixture,
  v2Event,
  webhookData,
  type WebhookFixture,
} from '../../helpers/webhooks.js';

let hook: WebhookFixture;
afterEach(async () => hook?.close());

function capture() {
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: { write: (line: string) => lines.push(line) },
  });
  return {
    log,
    lines,
    parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const detailCalls = (h: WebhookFixture) => h.sim.calls.filter((call) => call.endpoint === 'detail');

describe('starting the webhook service', () => {
  it('refuses to start without a public key unless unsigned deliveries are allowed, and then warns', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const base = { ...hook.config, webhookPublicKeyFile: undefined };
    const deps = { store: hook.store, client: hook.client, clock: hook.clock, pollingIsOn: false };
    await expect(
      startWebhookService({ ...deps, config: base, log: capture().log }),
    ).rejects.toMatchObject({ code: 'webhook.no_key' });

    const { log, parsed } = capture();
    const unsigned = await startWebhookService({
      ...deps,
      config: { ...base, isWebhookUnsignedAllowed: true },
      log,
    });
    try {
      expect(
        parsed().some((line) => line.level === 40 && /NOT verified/.test(String(line.msg))),
      ).toBe(true);
      const reply = await fetch(unsigned.url, {
        method: 'POST',
        body: JSON.stringify(v2Event('evt_1')),
      });
      expect(reply.status).toBe(200);
    } finally {
      await unsigned.stop();
    }
  });

  it('refuses a key file that is missing or not an RSA public key', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const deps = {
      store: hook.store,
      client: hook.client,
      clock: hook.clock,
      pollingIsOn: false,
      log: capture().log,
    };
    const dir = tempDir();
    await expect(
      startWebhookService({
        ...deps,
        config: { ...hook.config, webhookPublicKeyFile: join(dir, 'none.pem') },
      }),
    ).rejects.toMatchObject({ code: 'webhook.key_unreadable' });
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a key');
    await expect(
      startWebhookService({ ...deps, config: { ...hook.config, webhookPublicKeyFile: garbage } }),
    ).rejects.toMatchObject({ code: 'webhook.key_invalid' });
    const ec = join(dir, 'ec.pem');
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(ec, publicKey.export({ type: 'spki', format: 'pem' }));
    await expect(
      startWebhookService({ ...deps, config: { ...hook.config, webhookPublicKeyFile: ec } }),
    ).rejects.toMatchObject({ code: 'webhook.key_invalid' });
  });

  it('logs event ids, actions and statuses at info, never patient data', async () => {
    const { log, lines } = capture();
    hook = await startWebhookFixture({ requests: 0, log });
    await hook.post(v2Event('evt_0001'));
    await hook.post(
      v2Event('evt_0002', { data: webhookData({ agreed_for_time: 'next tuesday' }) }),
    );
    await hook.service.idle();
    const text = lines.join('\n');
    expect(text).toContain('evt_0001');
    expect(text).toContain('BROADCAST_ACCEPTED');
    for (const secret of ['Seán', "O'Brien", '1948-02-29', 'Zoë', 'CHF', 'next tuesday']) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('events parsed once', () => {
  it('applies a delivery from the body the receiver parsed, and reads back only events stored before it started', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    await hook.service.stop();
    // Stored while no receiver ran (a restart, or another daemon on a shared database).
    await hook.store.transaction((tx) => {
      const payload = v2Event('evt_0001');
      const body = Buffer.from(JSON.stringify(payload));
      return tx.events.insert(toEventRow(payload, body, tx.now()));
    });
    const readBack: string[] = [];
    const store: Store = {
      ...hook.store,
      // Each commit reaches its caller a turn late, as under load: a drain that reads the table
      // meanwhile must still find the receiver's deliveries handed over.
      transaction: (work, options) =>
        hook.store.transaction(work, options).then(async (result) => {
          await new Promise((resolve) => setImmediate(resolve));
          return result;
        }),
      read: (work, options) =>
        hook.store.read((tx) => {
          const payloads = (ids: readonly string[]) => {
            readBack.push(...ids);
            return tx.events.payloads(ids);
          };
          return work({ ...tx, events: { ...tx.events, payloads } });
        }, options),
    };
    const service = await startWebhookService({
      config: hook.config,
      store,
      client: hook.client,
      clock: hook.clock,
      pollingIsOn: false,
      log: capture().log,
    });
    try {
      await service.idle();
      // A burst, each event of a request of its own: the applier drains while later deliveries
      // commit.
      const ids = Array.from({ length: 120 }, (_, i) => `evt_${String(i + 2).padStart(4, '0')}`);
      const replies = await Promise.all(
        ids.map((id) => deliver(service.url, v2Event(id, { service_request_id: `XX-${id}` }))),
      );
      expect(replies.map((reply) => reply.status)).toEqual(ids.map(() => 200));
      await service.idle();
    } finally {
      await service.stop();
    }
    expect(
      await hook.count(
        'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
      ),
    ).toBe(121);
    expect(readBack).toEqual(['evt_0001']);
  });
});

describe('v1.0 events and detail fetches', () => {
  it('fetches the detail a v1.0 cue names, through the poll path, once for duplicate cues', async () => {
    hook = await startWebhookFixture({ requests: 60 });
    const [target] = truthInWindow(hook).filter((t) => t.isVisible && t.listState === 'accepted');
    const id = target!.requestId;
    hook.sim.resetCalls();
    const cue = (eventId: string) => ({
      event_id: eventId,
      event_type: 'request.data.updated',
      event: { request_id: id, request_current_state: 'accepted' },
    });
    await Promise.all([hook.post(cue('v1-1')), hook.post(cue('v1-2'))]);
    await hook.service.idle();
    expect(detailCalls(hook).length).toBeLessThanOrEqual(2);
    expect(detailCalls(hook).length).toBeGreaterThanOrEqual(1);
    const row = await queryOne(
      hook.db,
      'SELECT request_id, source, patient_last_name, facility_id FROM requests WHERE request_id = @id',
      { id },
    );
    const detail = target!.detail as Record<string, Record<string, unknown>>;
    expect(row).toEqual({
      request_id: id,
      source: 'webhook',
      patient_last_name: detail.patient_last_name,
      facility_id: detail.facility!.id,
    });
    expect(
      await hook.count(
        'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
      ),
    ).toBe(2);
  });

  it('fetches every request of a collection.state.updated event, and marks a 403 unavailable', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const ids = hook.sim.addRequests(3, { state: 'accepted' });
    hook.sim.world.makeUnavailable(ids[2]!, 'reassigned');
    hook.sim.resetCalls();
    await hook.post({
      event_id: 'v1-collection',
      event_type: 'collection.state.updated',
      event: { collection_id: 'C1', collection_current_state: 'accepted', request_ids: ids },
    });
    await hook.service.idle();
    expect(
      detailCalls(hook)
        .map((call) => call.requestId)
        .sort(),
    ).toEqual([...ids].sort());
    // Never stored before, so a 403 has nothing to mark: the two visible ones are stored.
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(2);
    expect(
      await hook.count(
        'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
      ),
    ).toBe(1);

    await hook.post({
      event_id: 'v1-gone',
      event_type: 'request.state.unavailable',
      event: { request_id: ids[0] },
    });
    hook.sim.world.makeUnavailable(ids[0]!, 'canceled');
    await hook.service.idle();
    const marked = await queryOne<{ unavailable_at: string | null }>(
      hook.db,
      'SELECT unavailable_at FROM requests WHERE request_id = @id',
      { id: ids[0] },
    );
    expect(marked!.unavailable_at).not.toBeNull();
  });

  it('keeps a cue whose fetch failed pending, retries it, and then processes it', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const [id] = hook.sim.addRequests(1, { state: 'accepted' });
    hook.sim.setFaults({ errorRate: 1, endpoints: ['detail'] });
    await hook.post({
      event_id: 'v1-1',
      event_type: 'request.status.available',
      event: { request_id: id },
    });
    await hook.service.idle();
    expect(
      await queryOne(
        hook.db,
        'SELECT processed_at, attempts, error IS NOT NULL AS failed FROM webhook_events',
      ),
    ).toEqual({ processed_at: null, attempts: 1, failed: 1 });
    // A restart retries at once (the wait between retries is in memory only).
    hook.sim.setFaults({});
    await hook.service.stop();
    await hook.restart();
    await hook.service.idle();
    expect(await queryOne(hook.db, 'SELECT error, attempts FROM webhook_events')).toEqual({
      error: null,
      attempts: 2,
    });
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(1);
  });

  it('with polling on and the strict policy, fetches the detail of a v2.0 event whose data drifted', async () => {
    hook = await startWebhookFixture({
      requests: 0,
      pollingIsOn: true,
      config: { schemaPolicy: 'strict' },
    });
    const [id] = hook.sim.addRequests(1, { state: 'accepted' });
    await hook.post(
      v2Event('evt_0001', {
        service_request_id: id,
        data: webhookData({ service_request_id: id, pickup_date_time: 'soon' }),
      }),
    );
    await hook.service.idle();
    expect(await queryOne(hook.db, 'SELECT error FROM webhook_events')).toEqual({
      error: 'invalid data: pickup_date_time: expected timestamp, got string',
    });
    expect(await queryOne(hook.db, 'SELECT request_id, source FROM requests')).toEqual({
      request_id: id,
      source: 'webhook',
    });
  });

  it('under evolve, applies an event as far as its valid members go and records the drift', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const [id] = hook.sim.addRequests(1, { state: 'accepted' });
    // The forms the service sent before 2026-03-01, a bad time and a member it added since.
    const legacy = { can_ambulate: 'Yes', hospice: 'No', wait_and_return: 'N' };
    await hook.post(
      v2Event('evt_0001', {
        service_request_id: id,
        data: webhookData({
          service_request_id: id,
          ...legacy,
          pickup_date_time: 'soon',
          brand_new_member: 1,
        }),
      }),
    );
    await hook.service.idle();
    expect(await queryOne(hook.db, 'SELECT error FROM webhook_events')).toEqual({
      error: null,
    });
    const row = await queryOne(
      hook.db,
      'SELECT list_state, transport_pickup_time, source FROM requests WHERE request_id = @id',
      { id },
    );
    expect(row).toEqual({ list_state: 'accepted', transport_pickup_time: null, source: 'webhook' });
    const profile = await queryOne(
      hook.db,
      'SELECT can_ambulate, hospice, wait_and_return FROM request_profiles WHERE request_id = @id',
      { id },
    );
    expect(profile).toEqual({ can_ambulate: null, hospice: null, wait_and_return: null });
    // Sorted here too: PostgreSQL's collation may order text differently from SQLite's.
    const drift = (
      await queryAll<{ member: string }>(
        hook.db,
        'SELECT member, problem, expected, received, source FROM schema_drift ORDER BY member',
      )
    ).sort((a, b) => (a.member < b.member ? -1 : 1));
    expect(drift).toEqual([
      {
        member: 'brand_new_member',
        problem: 'unknown',
        expected: null,
        received: 'number',
        source: 'webhook',
      },
      {
        member: 'can_ambulate',
        problem: 'type',
        expected: 'boolean',
        received: 'string',
        source: 'webhook',
      },
      {
        member: 'hospice',
        problem: 'type',
        expected: 'boolean',
        received: 'string',
        source: 'webhook',
      },
      {
        member: 'pickup_date_time',
        problem: 'type',
        expected: 'timestamp',
        received: 'string',
        source: 'webhook',
      },
      {
        member: 'wait_and_return',
        problem: 'type',
        expected: 'boolean',
        received: 'string',
        source: 'webhook',
      },
    ]);
  });
});
