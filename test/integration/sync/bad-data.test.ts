import { afterEach, describe, expect, it } from 'vitest';
import { startCorruptingProxy, type Corruption } from '../../helpers/corrupting-proxy.js';
import { countRows, queryAll, queryOne, testEngine } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../../helpers/truth.js';

let mirror: MirrorFixture;
let closeProxy: (() => Promise<void>) | undefined;
afterEach(async () => {
  await mirror?.close();
  await closeProxy?.();
});

type Json = Record<string, unknown>;

/**
 * A mirror of 120 requests whose service answers through a proxy that applies `corrupt`. Only
 * the proxy's corruptions: the simulator's own drift is another test's subject.
 */
async function startCorruptedMirror(
  corrupt: Corruption,
  options: Parameters<typeof startMirror>[0] = {},
): Promise<MirrorFixture> {
  return startMirror({
    requests: 120,
    roughness: { driftRate: 0 },
    ...options,
    serviceUrl: async (target) => {
      const proxy = await startCorruptingProxy(target, corrupt);
      closeProxy = proxy.close;
      return proxy.url;
    },
  });
}

/** Drift rows by member, then request (the expectation's order). */
const byMemberAndRequest = (a: Json, b: Json) => {
  const [x, y] = [
    `${String(a.member)}\u0000${String(a.request_id)}`,
    `${String(b.member)}\u0000${String(b.request_id)}`,
  ];
  return x < y ? -1 : x > y ? 1 : 0;
};

describe('malformed data from the service', () => {
  it('under the strict policy, stores the well-formed records, quarantines the drifted ones, and retries them until they come right', async () => {
    let corrupt: Corruption = () => undefined;
    mirror = await startCorruptedMirror((path, body) => corrupt(path, body), {
      clientOptions: { schemaPolicy: 'strict' },
    });
    await mirror.cycle();
    const ids = truthInWindow(mirror)
      .filter((t) => t.isVisible && t.listState === 'accepted')
      .map((t) => t.requestId);
    const [wrongType, missing, numberAsString, unknownMember, huge, control, sqlish, badListItem] =
      ids;
    for (const id of ids.slice(0, 8)) mirror.sim.world.editRequest(id, 'note');
    const rawJson = async (id: string | undefined) =>
      JSON.parse(
        (await queryOne<{ raw_json: string }>(
          mirror.db,
          'SELECT raw_json FROM requests WHERE request_id = @id',
          { id },
        ))!.raw_json,
      ) as unknown;
    const before = await rawJson(wrongType);

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
    // On PostgreSQL the record holding NUL is kept apart too (see below).
    const malformed = [wrongType, missing, numberAsString, badListItem];
    const keptApart = testEngine() === 'sqlite' ? malformed : [...malformed, control];
    expect(dirty.counts.requestsQuarantined).toBe(keptApart.length);
    const quarantined = await queryAll(
      mirror.db,
      'SELECT request_id, reason, raw_payload, seen_count FROM quarantine ORDER BY request_id',
    );
    expect(quarantined.map((row) => row.request_id).sort()).toEqual(keptApart.sort());
    const reasons = Object.fromEntries(quarantined.map((row) => [row.request_id, row.reason]));
    expect(reasons[wrongType!]).toMatch(/patient_dob/);
    expect(reasons[missing!]).toMatch(/request_current_state/);
    expect(reasons[numberAsString!]).toMatch(/pickup_location\.lat: expected number, got string/);
    expect(reasons[badListItem!]).toMatch(/last_updated_timestamp_utc/);
    expect(String(reasons[wrongType!])).not.toContain('19480229'); // the reason names the member, never the value
    // Never stored wrong: the last good version stays.
    expect(await rawJson(wrongType)).toEqual(before);
    // Well-formed but unusual records are stored exactly.
    const stored = async (id: string | undefined) =>
      (await queryOne<Json>(
        mirror.db,
        'SELECT patient_first_name, patient_last_name, raw_json FROM requests WHERE request_id = @id',
        { id },
      ))!;
    expect(
      JSON.parse((await stored(unknownMember)).raw_json as string).dispatch_priority_v3,
    ).toEqual({
      level: 2,
      why: ['new member'],
    });
    expect((await stored(huge)).patient_last_name).toBe(longName);
    if (testEngine() === 'sqlite') {
      expect((await stored(control)).patient_first_name).toBe('Ann\u0000\u0007\u001b[31m');
    } else {
      // PostgreSQL's text cannot hold NUL: the record is kept apart, never stored altered, and
      // the quarantine's copy spells the NUL out.
      const kept = await queryOne<Json>(
        mirror.db,
        'SELECT reason, raw_payload FROM quarantine WHERE request_id = @id',
        { id: control },
      );
      expect(kept!.reason).toMatch(/NUL character \(U\+0000\), which PostgreSQL cannot store/);
      expect(JSON.parse(kept!.raw_payload as string).patient_first_name).toBe(
        'Ann\\u0000\u0007\u001b[31m',
      );
      expect((await stored(control)).patient_first_name).not.toContain('\\u0000');
    }
    expect((await stored(sqlish)).patient_last_name).toBe("O'Brien'); DROP TABLE requests; --");
    expect(await countRows(mirror.db, 'requests')).toEqual(expect.any(Number));
    const run = await queryOne(
      mirror.db,
      'SELECT status, requests_quarantined FROM sync_runs ORDER BY run_id DESC LIMIT 1',
    );
    expect(run).toEqual({ status: 'ok', requests_quarantined: keptApart.length });

    // Still malformed next cycle: retried, still quarantined, seen again.
    await mirror.cycle();
    expect(
      (await queryOne<Json>(mirror.db, 'SELECT seen_count FROM quarantine WHERE request_id = @id', {
        id: wrongType,
      }))!.seen_count,
    ).toBe(2);

    // The service sends them right again: stored, quarantine empty, mirror equal to the truth.
    // (The others keep what the service sent until they change again: edit them.)
    corrupt = () => undefined;
    for (const id of [unknownMember, huge, control, sqlish])
      mirror.sim.world.editRequest(id!, 'note');
    const clean = await mirror.cycle();
    expect(clean.counts.requestsQuarantined).toBe(0);
    expect(await countRows(mirror.db, 'quarantine')).toBe(0);
    await expectMirrorEqualsTruth(mirror);
  });
});

describe('a character cut in two (half of a UTF-16 surrogate pair, as a truncated emoji)', () => {
  it('keeps the record apart on PostgreSQL, whose jsonb cannot hold it, and the rest of its page still syncs; SQLite stores it as sent', async () => {
    let corrupt: Corruption = () => undefined;
    mirror = await startCorruptedMirror((path, body) => corrupt(path, body));
    await mirror.cycle();
    const visible = truthInWindow(mirror).filter((t) => t.isVisible);
    const detailId = visible.find((t) => t.listState === 'accepted')!.requestId;
    const awaitingIds = visible.filter((t) => t.listState === 'awaiting').map((t) => t.requestId);
    const pageId = awaitingIds[0]!;
    mirror.sim.world.editRequest(detailId, 'note');
    const cut = (record: Json): Json => ({ ...record, patient_last_name: 'Smith \ud83d' });
    corrupt = (path, body) => {
      if (path === '/openapi/v1.0/request-details/') {
        const page = body as { results: Json[] };
        return {
          ...page,
          results: page.results.map((r) => (r.request_id === pageId ? cut(r) : r)),
        };
      }
      const detail = body as Json;
      return detail.request_id === detailId ? cut(detail) : undefined;
    };
    const run = await mirror.cycle();
    expect(run.status, run.error).toBe('ok');
    const rawName = async (id: string) => {
      const row = await queryOne<{ raw_json: string }>(
        mirror.db,
        'SELECT raw_json FROM requests WHERE request_id = @id',
        { id },
      );
      return (JSON.parse(row!.raw_json) as Json).patient_last_name;
    };
    if (testEngine() === 'sqlite') {
      expect(run.counts.requestsQuarantined).toBe(0);
      expect(await rawName(detailId)).toBe('Smith \ud83d');
      expect(await rawName(pageId)).toBe('Smith \ud83d');
    } else {
      expect(run.counts.requestsQuarantined).toBe(2);
      const kept = await queryAll<Json>(
        mirror.db,
        'SELECT request_id, reason, raw_payload FROM quarantine ORDER BY request_id',
      );
      expect(kept.map((row) => row.request_id)).toEqual([detailId, pageId].sort());
      for (const row of kept) {
        expect(row.reason).toMatch(/half of a UTF-16 surrogate pair .*PostgreSQL cannot store/);
        // The copy spells the half out, for people to read.
        expect((JSON.parse(row.raw_payload as string) as Json).patient_last_name).toBe(
          'Smith \\ud83d',
        );
      }
      // Never stored altered: the version before stays.
      expect(await rawName(detailId)).not.toContain('\ud83d');
    }
    // The page's other awaiting requests are in the mirror, as the service has them.
    for (const id of awaitingIds.slice(1)) expect(await rawName(id)).toEqual(expect.any(String));

    // The next idle cycle compares the page again without failing it.
    const again = await mirror.cycle();
    expect(again.status, again.error).toBe('ok');
    corrupt = () => undefined;
    mirror.sim.world.editRequest(detailId, 'note');
    await mirror.cycle();
    expect(await countRows(mirror.db, 'quarantine')).toBe(0);
    await expectMirrorEqualsTruth(mirror);
  });
});

describe('member drift from the service (evolve, the default)', () => {
  it('stores every valid member, NULL for a drifted one, records the drift by type name, and quarantines only a record without its state', async () => {
    let corrupt: Corruption = () => undefined;
    mirror = await startCorruptedMirror((path, body) => corrupt(path, body));
    await mirror.cycle();
    const ids = truthInWindow(mirror)
      .filter((t) => t.isVisible && t.listState === 'accepted')
      .map((t) => t.requestId);
    const [wrongType, noState, numberAsString, unknownMember, noLastName, flagAsText] = ids;
    for (const id of ids.slice(0, 6)) mirror.sim.world.editRequest(id, 'note');
    corrupt = (path, body) => {
      if (path === '/openapi/v1.0/requests/' && Array.isArray(body)) return undefined;
      const detail = body as Json;
      const id = detail.request_id;
      if (id === wrongType) return { ...detail, patient_dob: 19480229 };
      if (id === noState) {
        const { request_current_state: _dropped, ...rest } = detail;
        return rest;
      }
      if (id === numberAsString)
        return {
          ...detail,
          pickup_location: { ...(detail.pickup_location as Json), lat: '41.88' },
        };
      if (id === unknownMember) return { ...detail, dispatch_priority_v3: { level: 2 } };
      if (id === noLastName) {
        const { patient_last_name: _dropped, service_level_type: _too, ...rest } = detail;
        return rest;
      }
      if (id === flagAsText) return { ...detail, is_round_trip_first_trip: 'false' };
      return undefined;
    };
    const run = await mirror.cycle();
    expect(run.status, run.error).toBe('ok');
    expect(run.counts.requestsQuarantined).toBe(1);
    expect(run.counts.schemaDrift).toBe(6);
    const q = await queryAll(mirror.db, 'SELECT request_id, reason FROM quarantine');
    expect(q).toEqual([
      { request_id: noState, reason: expect.stringMatching(/request_current_state/) },
    ]);

    const rows = new Map(
      (await queryAll<Json>(mirror.db, 'SELECT * FROM requests')).map((r) => [r.request_id, r]),
    );
    const row = (id: string | undefined) => rows.get(id)!;
    const truthOf = (id: string | undefined) =>
      mirror.sim.truth().find((t) => t.requestId === id)!.detail as Json;
    // The drifted member is NULL, every other member is the service's current one.
    expect(row(wrongType).patient_dob).toBeNull();
    expect(row(wrongType).patient_last_name).toBe(truthOf(wrongType).patient_last_name);
    expect(JSON.parse(row(wrongType).raw_json as string).enabled_request_fields).toEqual(
      truthOf(wrongType).enabled_request_fields,
    );
    // A numeric string reads the same as its number: stored as the number, and still drift.
    const lat = (await queryOne<Json>(
      mirror.db,
      "SELECT lat FROM request_locations WHERE request_id = @id AND role = 'pickup'",
      { id: numberAsString },
    ))!;
    expect(lat.lat).toBe(41.88);
    expect(row(noLastName).patient_last_name).toBeNull();
    expect(row(noLastName).service_level_type).toBeNull();
    // "false" is never stored as a boolean: it is NULL, and drift.
    expect(row(flagAsText).is_round_trip_first_trip).toBeNull();
    expect(JSON.parse(row(unknownMember).raw_json as string).dispatch_priority_v3).toEqual({
      level: 2,
    });

    // Sorted here, as the expectation is: PostgreSQL's collation orders text its own way.
    const drift = (
      await queryAll<Json>(
        mirror.db,
        'SELECT request_id, source, member, problem, expected, received, count FROM schema_drift',
      )
    ).sort(byMemberAndRequest);
    expect(drift).toEqual(
      [
        {
          request_id: wrongType,
          member: 'patient_dob',
          problem: 'type',
          expected: 'date',
          received: 'number',
        },
        {
          request_id: numberAsString,
          member: 'pickup_location.lat',
          problem: 'type',
          expected: 'number',
          received: 'string',
        },
        {
          request_id: unknownMember,
          member: 'dispatch_priority_v3',
          problem: 'unknown',
          expected: null,
          received: 'object',
        },
        {
          request_id: noLastName,
          member: 'patient_last_name',
          problem: 'missing',
          expected: 'string',
          received: null,
        },
        {
          request_id: noLastName,
          member: 'service_level_type',
          problem: 'missing',
          expected: 'string',
          received: null,
        },
        {
          request_id: flagAsText,
          member: 'is_round_trip_first_trip',
          problem: 'type',
          expected: 'boolean',
          received: 'string',
        },
      ]
        .map((d) => ({ ...d, source: 'poll', count: 1 }))
        .sort(byMemberAndRequest),
    );
    // Type names only: no value the service sent reaches the table.
    const text = JSON.stringify(await queryAll(mirror.db, 'SELECT * FROM schema_drift'));
    expect(text).not.toContain('19480229');
    expect(text).not.toContain('41.88');
    expect(
      await queryOne(mirror.db, 'SELECT schema_drift FROM sync_runs WHERE run_id = @runId', {
        runId: run.runId,
      }),
    ).toEqual({ schema_drift: 6 });
  });
});

describe("the simulator's own drift, on every request", () => {
  it('stores every record with its valid members, and records each drifted member once per request, an unknown one once in all', async () => {
    mirror = await startMirror({ requests: 120, roughness: { driftRate: 1, pagingChurnRate: 0 } });
    const run = await mirror.cycle();
    expect(run.status, run.error).toBe('ok');
    expect(run.counts.requestsQuarantined).toBe(0);
    expect(run.counts.schemaDrift).toBeGreaterThan(0);
    await expectMirrorEqualsTruth(mirror);
    const missing = (await queryOne<{ n: number }>(
      mirror.db,
      "SELECT count(DISTINCT request_id) AS n FROM schema_drift WHERE problem = 'missing'",
    ))!;
    expect(missing.n).toBeGreaterThan(10);
    // An unknown member is one row, however many records carry it.
    const unknown = await queryAll<{ member: string; rows: number; seen: number }>(
      mirror.db,
      "SELECT member, count(*) AS rows, sum(count) AS seen FROM schema_drift WHERE problem = 'unknown' GROUP BY member",
    );
    expect(unknown.length).toBeGreaterThan(0);
    for (const row of unknown) expect(row.rows, row.member).toBe(1);
    expect(unknown.some((row) => row.seen > 1)).toBe(true);
  });
});
