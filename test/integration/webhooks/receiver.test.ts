import { afterEach, describe, expect, it } from 'vitest';
import { execute, queryAll, queryOne, testEngine } from '../../helpers/engine.js';
import {
  deliver,
  parseJsonColumns,
  signBody,
  startWebhookFixture,
  v2Event,
  webhookData,
  type WebhookFixture,
} from '../../helpers/webhooks.js';

let hook: WebhookFixture;
afterEach(async () => hook?.close());

const row = (sql: string, params?: object) =>
  queryOne<Record<string, unknown>>(hook.db, sql, params);

describe('the webhook receiver', () => {
  it('stores a signed delivery before its 2xx, then applies it to requests, locations, accounts and request_profiles', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const reply = await hook.post(v2Event('evt_0001'));
    expect(reply).toMatchObject({ status: 200, body: { status: 'stored' } });
    await hook.service.idle();

    expect(await row('SELECT * FROM webhook_events')).toMatchObject({
      event_id: 'evt_0001',
      envelope: 'v2',
      event_timestamp: '2026-11-21T10:00:00.000Z',
      service_request_id: 'XX-ABCD1234',
      request_status: 'ASSIGNED',
      action: 'BROADCAST_ACCEPTED',
      error: null,
      attempts: 1,
    });
    expect((await row('SELECT processed_at FROM webhook_events'))?.processed_at).not.toBeNull();
    const request = await row('SELECT * FROM requests');
    expect(request).toMatchObject({
      request_id: 'XX-ABCD1234',
      list_state: 'accepted',
      request_current_state: 'accepted',
      patient_first_name: 'Seán',
      patient_last_name: "O'Brien",
      patient_dob: '1948-02-29',
      transport_pickup_time: '2026-11-22T14:00:00.000Z',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
      event_dt_utc: '2026-11-22T14:30:00.000Z',
      service_level_type: 'BLS',
      service_type: 'Ambulance',
      account_id: 'ORG1',
      facility_id: null,
      user_first_name: 'Open',
      user_email: 'openapi@provider.example',
      is_round_trip_first_trip: 0,
      collection_id: 'COL1',
      created_timestamp_utc: null,
      last_updated_timestamp_utc: null,
      unavailable_at: null,
      synced_at: '2026-11-21T10:00:00.000Z',
      source: 'webhook',
      content_hash: null,
    });
    expect(JSON.parse(request!.raw_json as string)).toEqual(webhookData());
    expect(
      await queryAll(
        hook.db,
        'SELECT role, location_id, city, street FROM request_locations ORDER BY role',
      ),
    ).toEqual([
      { role: 'destination', location_id: null, city: 'Dublin', street: '7 Elm Ct' },
      { role: 'pickup', location_id: null, city: 'Columbus', street: '100 N High St' },
    ]);
    expect(await row('SELECT account_id, name FROM accounts')).toEqual({
      account_id: 'ORG1',
      name: "St. Brigid's Regional Medical Center",
    });
    const profile = parseJsonColumns(await row('SELECT * FROM request_profiles'));
    expect(profile).toMatchObject({
      request_id: 'XX-ABCD1234',
      facility_name: 'North Campus',
      account_name: "St. Brigid's Regional Medical Center",
      appointment_datetime: '2026-11-22T15:30:00.000Z',
      pickup_is_home: 0,
      destination_is_home: 1,
      patient_weight_lbs: 180.5,
      patient_active_membership: 1,
      is_recent_onset: null,
      note: 'Call daughter (Zoë) on arrival; gate code #4471',
      event_id: 'evt_0001',
      updated_at: '2026-11-21T10:00:00.000Z',
    });
    // JSON columns as values (PostgreSQL reprints jsonb), each compared whole.
    expect({
      patient_coverages_json: profile?.patient_coverages_json,
      under_isolation_json: profile?.under_isolation_json,
      intravenous_therapy_json: profile?.intravenous_therapy_json,
    }).toEqual({
      patient_coverages_json: [{ payer: 'Medicare', member_id: 'A123' }],
      under_isolation_json: [],
      intravenous_therapy_json: null,
    });
    expect(await row('SELECT kind, source, new_state FROM request_changes')).toEqual({
      kind: 'created',
      source: 'webhook',
      new_state: 'accepted',
    });
  });

  it('answers 401 to a missing, malformed or wrong signature and stores nothing', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const event = JSON.stringify(v2Event('evt_0001'));
    expect((await hook.post(event, { signature: null })).status).toBe(401);
    expect((await hook.post(event, { signature: 'not base64 at all!' })).status).toBe(401);
    expect((await hook.post(event, { signature: signBody(`${event} `) })).status).toBe(401);
    // Signed, then changed in flight: the bytes are what is verified, not the meaning.
    expect(
      (await hook.post(event.replace('BLS', 'ALS'), { signature: signBody(event) })).status,
    ).toBe(401);
    await hook.service.idle();
    expect(await hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(0);
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(0);
  });

  it('acknowledges a duplicate event_id with a 2xx and applies it once', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const event = v2Event('evt_0001');
    expect((await hook.post(event)).body).toEqual({ status: 'stored' });
    await hook.service.idle();
    const [again, concurrent] = await Promise.all([hook.post(event), hook.post(event)]);
    expect([again.status, concurrent.status]).toEqual([200, 200]);
    expect(again.body).toEqual({ status: 'duplicate' });
    await hook.service.idle();
    expect(await hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(1);
    expect(await hook.count('SELECT count(*) AS n FROM request_changes')).toBe(1);
    expect(await row('SELECT attempts FROM webhook_events')).toEqual({ attempts: 1 });
  });

  it('logs a change of kind profile when an event changes only members without a requests column', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    await hook.post(v2Event('evt_0001', { data: webhookData({ note: 'first note' }) }));
    await hook.service.idle();
    await hook.post(
      v2Event('evt_0002', {
        event_timestamp: '2026-11-21T10:00:00.000Z',
        data: webhookData({ note: 'second note' }),
      }),
    );
    await hook.service.idle();
    const changes = await queryAll<Record<string, unknown>>(
      hook.db,
      'SELECT kind, source, changed_columns, old_values_json, new_values_json FROM request_changes ORDER BY change_id',
    );
    // The first event created the request (its first profile with it); the second changed the
    // profile's note and nothing of the requests row: before profiles were logged, no change.
    expect(changes.map((change) => change.kind)).toEqual(['created', 'profile']);
    expect(changes[1]).toMatchObject({ source: 'webhook', changed_columns: 'note' });
    expect(JSON.parse(String(changes[1]!.old_values_json))).toEqual({ note: 'first note' });
    expect(JSON.parse(String(changes[1]!.new_values_json))).toEqual({ note: 'second note' });
    // The same event again changes nothing.
    await hook.post(
      v2Event('evt_0003', {
        event_timestamp: '2026-11-21T10:05:00.000Z',
        data: webhookData({ note: 'second note' }),
      }),
    );
    await hook.service.idle();
    expect(
      await hook.count("SELECT count(*) AS n FROM request_changes WHERE kind = 'profile'"),
    ).toBe(1);
  });

  it('never moves a request back for an older event, whatever order events arrive in', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const received = v2Event('evt_0001', {
      event_timestamp: '2026-11-21T09:00:00.000Z',
      request_status: 'AVAILABLE',
      action: 'BROADCAST_RECEIVED',
      data: webhookData({
        request_current_state: 'awaiting',
        agreed_for_time: null,
        responder_user_first_name: null,
        responder_user_last_name: null,
        responder_user_email: null,
        note: 'first note',
      }),
    });
    const accepted = v2Event('evt_0002', { event_timestamp: '2026-11-21T09:05:00.000Z' });
    // The later event arrives first; the earlier one must not undo it.
    await hook.post(accepted);
    await hook.service.idle();
    await hook.post(received);
    await hook.service.idle();
    expect(
      await row('SELECT list_state, transport_agreed_for_time, user_last_name FROM requests'),
    ).toEqual({
      list_state: 'accepted',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
      user_last_name: 'API',
    });
    expect(await row('SELECT note, event_id FROM request_profiles')).toEqual({
      note: webhookData().note,
      event_id: 'evt_0002',
    });
    expect(
      await row(
        "SELECT processed_at IS NOT NULL AS done, error FROM webhook_events WHERE event_id = 'evt_0001'",
      ),
    ).toEqual({ done: 1, error: null });
    expect(await hook.count('SELECT count(*) AS n FROM request_changes')).toBe(1);

    // Both pending at once, delivered newest first: applied in event_id order, newest wins.
    const later = v2Event('evt_0004', {
      event_timestamp: '2026-11-21T09:20:00.000Z',
      request_status: 'COMPLETED',
      action: 'REQUEST_COMPLETED',
      data: webhookData({ request_current_state: 'completed' }),
    });
    const earlier = v2Event('evt_0003', {
      event_timestamp: '2026-11-21T09:10:00.000Z',
      data: webhookData({ agreed_for_time: '2026-11-22T15:00:00Z' }),
    });
    await Promise.all([hook.post(later), hook.post(earlier)]);
    await hook.service.idle();
    expect(await row('SELECT list_state, transport_agreed_for_time FROM requests')).toEqual({
      list_state: 'completed',
      transport_agreed_for_time: '2026-11-22T14:30:00.000Z',
    });
  });

  it('orders a webhook against a polled detail by time: an event older than the poll is skipped', async () => {
    hook = await startWebhookFixture({ requests: 40 });
    await hook.cycle();
    const id = (await row("SELECT request_id FROM requests WHERE list_state = 'accepted' LIMIT 1"))!
      .request_id as string;
    const polled = (await row('SELECT * FROM requests WHERE request_id = @id', { id }))!;
    const stale = v2Event('evt_0001', {
      service_request_id: id,
      event_timestamp: new Date(hook.clock.now() - 60_000).toISOString(),
      data: webhookData({ service_request_id: id, service_level_type: 'CCT' }),
    });
    await hook.post(stale);
    await hook.service.idle();
    expect(await row('SELECT * FROM requests WHERE request_id = @id', { id })).toEqual(polled);

    const fresh = v2Event('evt_0002', {
      service_request_id: id,
      event_timestamp: new Date(hook.clock.now() + 60_000).toISOString(),
      data: webhookData({ service_request_id: id, service_level_type: 'CCT' }),
    });
    await hook.post(fresh);
    await hook.service.idle();
    const written = (await row('SELECT * FROM requests WHERE request_id = @id', { id }))!;
    expect(written).toMatchObject({
      service_level_type: 'CCT',
      source: 'webhook',
      // Kept: webhooks carry neither; cleared: the polled values described the old content.
      facility_id: polled.facility_id,
      created_timestamp_utc: polled.created_timestamp_utc,
      last_updated_timestamp_utc: null,
      content_hash: null,
    });
    const change = (await row(
      "SELECT source, changed_columns FROM request_changes WHERE request_id = @id AND kind = 'updated'",
      { id },
    ))!;
    expect(change.source).toBe('webhook');
    expect(change.changed_columns).toContain('service_level_type');

    // The next poll sees the cleared last_updated, fetches the detail and is again the truth.
    hook.clock.advance(120_000);
    await hook.cycle();
    expect(
      await row('SELECT service_level_type, source FROM requests WHERE request_id = @id', { id }),
    ).toEqual({
      service_level_type: polled.service_level_type,
      source: 'poll',
    });
  });

  it('marks a request unavailable on UNAVAILABLE with null data, keeping its data, and an older mark never wins', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    await hook.post(v2Event('evt_0001'));
    await hook.post(
      v2Event('evt_0002', {
        event_timestamp: '2026-11-21T11:00:00.000Z',
        request_status: 'UNAVAILABLE',
        action: 'BROADCAST_CANCELED',
        data: null,
      }),
    );
    await hook.service.idle();
    expect(await row('SELECT unavailable_at, patient_last_name, list_state FROM requests')).toEqual(
      {
        unavailable_at: '2026-11-21T11:00:00.000Z',
        patient_last_name: "O'Brien",
        list_state: 'accepted',
      },
    );
    expect(
      await row("SELECT kind, source FROM request_changes WHERE kind = 'unavailable'"),
    ).toEqual({
      kind: 'unavailable',
      source: 'webhook',
    });
    // A stale "available" (older than the mark) does not bring it back; a newer one does.
    await hook.post(v2Event('evt_0000', { event_timestamp: '2026-11-21T10:30:00.000Z' }));
    await hook.service.idle();
    expect((await row('SELECT unavailable_at FROM requests'))!.unavailable_at).not.toBeNull();
    await hook.post(v2Event('evt_0003', { event_timestamp: '2026-11-21T12:00:00.000Z' }));
    await hook.service.idle();
    expect((await row('SELECT unavailable_at FROM requests'))!.unavailable_at).toBeNull();
    expect(await row("SELECT kind FROM request_changes WHERE kind = 'available'")).toEqual({
      kind: 'available',
    });
  });

  it('stores and acknowledges unknown actions, statuses, event types and shapes', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const replies = await Promise.all([
      hook.post(
        v2Event('evt_0001', { action: 'SOMETHING_NEW', request_status: 'ON_HOLD', data: null }),
      ),
      hook.post(
        v2Event('evt_0002', {
          action: 'REQUEST_CANCELED',
          request_status: 'CANCELED',
          data: webhookData({ request_current_state: 'canceled' }),
        }),
      ),
      hook.post({ event_id: 17, event_type: 'request.teleported', event: { request_id: null } }),
      hook.post({ hello: 'world' }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    await hook.service.idle();
    // Sorted here too: PostgreSQL's collation may order text differently from SQLite's.
    const events = (
      await queryAll<Record<string, string | null>>(
        hook.db,
        'SELECT event_id, envelope, action, request_status, event_type, error FROM webhook_events ORDER BY event_id',
      )
    ).sort((a, b) => (a.event_id! < b.event_id! ? -1 : 1));
    expect(
      events.map((event) => [event.event_id, event.envelope, event.action ?? event.event_type]),
    ).toEqual([
      ['17', 'v1', 'request.teleported'],
      ['evt_0001', 'v2', 'SOMETHING_NEW'],
      ['evt_0002', 'v2', 'REQUEST_CANCELED'],
      [expect.stringMatching(/^sha256:[0-9a-f]{64}$/), 'unknown', null],
    ]);
    // An undocumented status with data still lands: its list state comes from the data's state.
    expect(await row('SELECT list_state FROM requests')).toEqual({ list_state: 'canceled' });
    expect(
      await hook.count('SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL'),
    ).toBe(0);
  });

  it('answers 413 to an oversized body and 400 to one that is not a JSON object, storing neither', async () => {
    hook = await startWebhookFixture({ requests: 0, config: { webhookMaxBodyBytes: 2048 } });
    const big = JSON.stringify(v2Event('evt_0001', { padding: 'x'.repeat(4096) }));
    expect((await hook.post(big)).status).toBe(413);
    expect((await hook.post('{"event_id": "evt_0002", ')).status).toBe(400);
    expect((await hook.post('[1, 2, 3]')).status).toBe(400);
    expect((await hook.post('')).status).toBe(400);
    const wrongPath = await deliver(
      hook.service.url.replace('/webhooks/', '/other/'),
      v2Event('evt_3'),
    );
    expect(wrongPath.status).toBe(404);
    const get = await fetch(hook.service.url);
    expect(get.status).toBe(405);
    expect(await hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(0);
    // The receiver is still serving after refusing.
    const small = v2Event('evt_0004', { request_status: 'UNAVAILABLE', data: null });
    expect((await hook.post(small)).status).toBe(200);
  });

  it('acknowledges and keeps a delivery holding text the engine cannot store, without failing those that share its commit', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    const event = (id: string, requestId: string, data: Record<string, unknown> = {}) =>
      v2Event(id, {
        service_request_id: requestId,
        data: webhookData({ service_request_id: requestId, ...data }),
      });
    // Sent together, so that they arrive in one turn and share one commit.
    const replies = await Promise.all([
      hook.post(event('evt_a', 'XX-AAAA0001')),
      hook.post(event('evt_cut', 'XX-CUT00001', { patient_last_name: 'Smith \ud83d' })),
      hook.post(event('evt_nul', 'XX-NUL00001', { notes: 'a\u0000b' })),
      hook.post(event('evt_d', 'XX-DDDD0001')),
      // Cut in a member the row keeps in a column of its own, too.
      hook.post({ ...event('evt_cut_action', 'XX-CUTA0001'), action: 'Updated \ud83d' }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200]);
    await hook.service.idle();
    const events = await queryAll<Record<string, unknown>>(
      hook.db,
      'SELECT event_id, processed_at IS NOT NULL AS done, error FROM webhook_events ORDER BY event_id',
    );
    const requests = await queryAll<{ request_id: string }>(
      hook.db,
      'SELECT request_id FROM requests ORDER BY request_id',
    );
    if (testEngine() === 'sqlite') {
      expect(events.map((e) => [e.event_id, e.error])).toEqual([
        ['evt_a', null],
        ['evt_cut', null],
        ['evt_cut_action', null],
        ['evt_d', null],
        ['evt_nul', null],
      ]);
      expect(requests.map((r) => r.request_id)).toEqual([
        'XX-AAAA0001',
        'XX-CUT00001',
        'XX-CUTA0001',
        'XX-DDDD0001',
        'XX-NUL00001',
      ]);
      return;
    }
    // PostgreSQL: kept, with what it cannot hold spelled out, and marked not applied.
    expect(events).toEqual([
      { event_id: 'evt_a', done: 1, error: null },
      {
        event_id: 'evt_cut',
        done: 1,
        error: expect.stringMatching(/not applied: .*half of a UTF-16 surrogate pair/),
      },
      {
        event_id: 'evt_cut_action',
        done: 1,
        error: expect.stringMatching(/not applied: .*half of a UTF-16 surrogate pair/),
      },
      { event_id: 'evt_d', done: 1, error: null },
      { event_id: 'evt_nul', done: 1, error: expect.stringMatching(/not applied: .*NUL/) },
    ]);
    const kept = await row("SELECT payload_json FROM webhook_events WHERE event_id = 'evt_cut'");
    expect(
      (JSON.parse(kept!.payload_json as string) as { data: Record<string, unknown> }).data
        .patient_last_name,
    ).toBe('Smith \\ud83d');
    // Spelled out in its column as in the payload, not turned into U+FFFD.
    expect(
      await row("SELECT action FROM webhook_events WHERE event_id = 'evt_cut_action'"),
    ).toEqual({ action: 'Updated \\ud83d' });
    expect(requests.map((r) => r.request_id)).toEqual(['XX-AAAA0001', 'XX-DDDD0001']);
  });

  it('answers 503 to the one delivery the engine refuses, and stores those that shared its commit', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    // An engine refusing one row, as a constraint or a trigger of the operator's would.
    await execute(
      hook.db,
      testEngine() === 'sqlite'
        ? `CREATE TRIGGER refuse_one BEFORE INSERT ON webhook_events
             WHEN NEW.event_id = 'evt_refused' BEGIN SELECT RAISE(ABORT, 'refused'); END`
        : `CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF NEW.event_id = 'evt_refused' THEN RAISE EXCEPTION 'refused'; END IF;
             RETURN NEW; END $$`,
    );
    if (testEngine() === 'postgres')
      await execute(
        hook.db,
        `CREATE TRIGGER refuse_one BEFORE INSERT ON webhook_events
           FOR EACH ROW EXECUTE FUNCTION refuse_one()`,
      );
    const replies = await Promise.all(
      ['evt_1', 'evt_refused', 'evt_2'].map((id, i) =>
        hook.post(v2Event(id, { service_request_id: `XX-REFU000${i}` })),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual([200, 503, 200]);
    expect(
      (
        await queryAll<{ event_id: string }>(
          hook.db,
          'SELECT event_id FROM webhook_events ORDER BY event_id',
        )
      ).map((e) => e.event_id),
    ).toEqual(['evt_1', 'evt_2']);
  });

  it('loses nothing when the process dies between the 2xx and applying: the next start applies it', async () => {
    hook = await startWebhookFixture({ requests: 0 });
    await hook.service.stop();
    // A receiver whose applier never runs: stored and acknowledged, then the process "dies".
    const { createReceiver } = await import('../../../src/webhooks/receiver.js');
    const { createVerifier, loadPublicKey } = await import('../../../src/webhooks/signature.js');
    const { silentLogger } = await import('../../../src/log.js');
    const server = createReceiver({
      path: '/webhooks/',
      maxBodyBytes: 1_048_576,
      verify: createVerifier(loadPublicKey(hook.keyFile)),
      signatureHeader: 'X-VectorCare-Signature',
      storeEvents: (rows) => hook.store.transaction((tx) => tx.events.insertMany(rows)),
      now: () => hook.store.now(),
      log: silentLogger(),
      onStored: () => undefined,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/webhooks/`;
    expect((await deliver(url, v2Event('evt_0001'))).status).toBe(200);
    expect(
      (await deliver(url, v2Event('evt_0002', { data: webhookData({ note: 'second' }) }))).status,
    ).toBe(200);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(
      await hook.count('SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL'),
    ).toBe(2);
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(0);

    await hook.restart();
    await hook.service.idle();
    expect(
      await hook.count('SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL'),
    ).toBe(0);
    expect(await row('SELECT note, event_id FROM request_profiles')).toEqual({
      note: 'second',
      event_id: 'evt_0002',
    });
  });
});
