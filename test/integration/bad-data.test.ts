import { afterEach, describe, expect, it } from 'vitest';
import { startCorruptingProxy, type Corruption } from '../helpers/corrupting-proxy.js';
import { startMirror, type MirrorFixture } from '../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../helpers/truth.js';

let mirror: MirrorFixture;
let closeProxy: (() => Promise<void>) | undefined;
afterEach(async () => {
  await mirror?.close();
  await closeProxy?.();
});

type Json = Record<string, unknown>;

describe('malformed data from the service', () => {
  it('stores the well-formed records, quarantines the malformed ones, and retries them until they come right', async () => {
    let corrupt: Corruption = () => undefined;
    mirror = await startMirror({
      requests: 120,
      serviceUrl: async (target) => {
        const proxy = await startCorruptingProxy(target, (path, body) => corrupt(path, body));
        closeProxy = proxy.close;
        return proxy.url;
      },
    });
    await mirror.cycle();
    const ids = truthInWindow(mirror)
      .filter((t) => t.isVisible && t.listState === 'accepted')
      .map((t) => t.requestId);
    const [wrongType, missing, numberAsString, unknownMember, huge, control, sqlish, badListItem] =
      ids;
    for (const id of ids.slice(0, 8)) mirror.sim.world.editRequest(id, 'note');
    const before = mirror.db.sqlite
      .prepare('SELECT raw_json FROM requests WHERE request_id = ?')
      .get(wrongType) as Json;

    const longName = 'x'.repeat(100_000);
    corrupt = (path, body) => {
      if (path === '/openapi/v1.0/requests/' && Array.isArray(body)) {
        return body.map((item: Json) =>
          item.id === badListItem ? { ...item, last_updated_timestamp_utc: 'not a time' } : item,
        );
      }
      const detail = body as Json;
      const id = detail.request_id;
      if (id === wrongType) return { ...detail, patient_dob: 19480229 };
      if (id === missing) {
        const { request_current_state: _dropped, ...rest } = detail;
        return rest;
      }
      if (id === numberAsString)
        return {
          ...detail,
          pickup_location: { ...(detail.pickup_location as Json), lat: '41.88' },
        };
      if (id === unknownMember)
        return { ...detail, dispatch_priority_v3: { level: 2, why: ['new member'] } };
      if (id === huge) return { ...detail, patient_last_name: longName };
      if (id === control) return { ...detail, patient_first_name: 'Ann\u0000\u0007\u001b[31m' };
      if (id === sqlish)
        return { ...detail, patient_last_name: "O'Brien'); DROP TABLE requests; --" };
      return undefined;
    };
    const dirty = await mirror.cycle();
    expect(dirty.counts.requestsQuarantined).toBe(4);
    const quarantined = mirror.db.sqlite
      .prepare(
        'SELECT request_id, reason, raw_payload, seen_count FROM quarantine ORDER BY request_id',
      )
      .all() as Json[];
    expect(quarantined.map((row) => row.request_id).sort()).toEqual(
      [wrongType, missing, numberAsString, badListItem].sort(),
    );
    const reasons = Object.fromEntries(quarantined.map((row) => [row.request_id, row.reason]));
    expect(reasons[wrongType!]).toMatch(/patient_dob/);
    expect(reasons[missing!]).toMatch(/request_current_state/);
    expect(reasons[numberAsString!]).toMatch(/pickup_location\.lat/);
    expect(reasons[badListItem!]).toMatch(/last_updated_timestamp_utc/);
    expect(String(reasons[wrongType!])).not.toContain('19480229'); // the reason names the member, never the value
    // Never stored wrong: the last good version stays.
    expect(
      mirror.db.sqlite.prepare('SELECT raw_json FROM requests WHERE request_id = ?').get(wrongType),
    ).toEqual(before);
    // Well-formed but unusual records are stored exactly.
    const stored = (id: string | undefined) =>
      mirror.db.sqlite
        .prepare(
          'SELECT patient_first_name, patient_last_name, raw_json FROM requests WHERE request_id = ?',
        )
        .get(id) as Json;
    expect(JSON.parse(stored(unknownMember).raw_json as string).dispatch_priority_v3).toEqual({
      level: 2,
      why: ['new member'],
    });
    expect(stored(huge).patient_last_name).toBe(longName);
    expect(stored(control).patient_first_name).toBe('Ann\u0000\u0007\u001b[31m');
    expect(stored(sqlish).patient_last_name).toBe("O'Brien'); DROP TABLE requests; --");
    expect(mirror.db.sqlite.prepare('SELECT count(*) AS n FROM requests').get()).toEqual({
      n: expect.any(Number),
    });
    const run = mirror.db.sqlite
      .prepare('SELECT status, requests_quarantined FROM sync_runs ORDER BY run_id DESC LIMIT 1')
      .get();
    expect(run).toEqual({ status: 'ok', requests_quarantined: 4 });

    // Still malformed next cycle: retried, still quarantined, seen again.
    await mirror.cycle();
    expect(
      (
        mirror.db.sqlite
          .prepare('SELECT seen_count FROM quarantine WHERE request_id = ?')
          .get(wrongType) as Json
      ).seen_count,
    ).toBe(2);

    // The service sends them right again: stored, quarantine empty, mirror equal to the truth.
    // (The others keep what the service sent until they change again: edit them.)
    corrupt = () => undefined;
    for (const id of [unknownMember, huge, control, sqlish])
      mirror.sim.world.editRequest(id!, 'note');
    const clean = await mirror.cycle();
    expect(clean.counts.requestsQuarantined).toBe(0);
    expect(mirror.db.sqlite.prepare('SELECT count(*) AS n FROM quarantine').get()).toEqual({
      n: 0,
    });
    expectMirrorEqualsTruth(mirror);
  });
});
