import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TruthRecord } from '../../../src/simulator/index.js';
import { normalizeTimestamp } from '../../../src/time.js';
import { epochSec, SMOOTH, startSimulator, T0, type Started } from '../../helpers/simulator.js';

interface ListItem {
  id: string;
  state: string;
  created_timestamp_utc: string;
  event_dt_utc: string;
  last_updated_timestamp_utc: string;
}
interface Page {
  page: number;
  pages: number;
  results: Record<string, unknown>[];
}

const DAY = 86_400;
const NOW = T0 / 1000;
const WIDE = `date__gte=${NOW - 40 * DAY}&date__lte=${NOW + 20 * DAY}`;

/** What the partial list should hold for `state` in [gte, lte] seconds, by the truth. */
function expected(truth: TruthRecord[], state: string, gte: number, lte: number): TruthRecord[] {
  return truth.filter((t) => {
    const at = Date.parse(t.eventDtUtc);
    return t.isVisible && t.listState === state && at >= gte * 1000 && at <= lte * 1000;
  });
}

describe('simulator list and detail endpoints', () => {
  let s: Started;
  beforeAll(async () => {
    // The documented behaviour: no churn while paging, no drifting records.
    s = await startSimulator({ seed: 7, requests: 300, pageSize: 7, roughness: SMOOTH });
  });
  afterAll(() => s.sim.close());

  const list = async (query = '') => {
    const reply = await s.api(`/openapi/v1.0/requests/${query}`);
    expect(reply.status).toBe(200);
    return reply.body as ListItem[];
  };
  const allPages = async (query: string) => {
    const first = (await s.api(`/openapi/v1.0/request-details/?${query}`)).body as Page;
    const pages = [first];
    for (let page = 2; page <= first.pages; page += 1) {
      const reply = await s.api(`/openapi/v1.0/request-details/?${query}&page=${page}`);
      expect(reply.status).toBe(200);
      pages.push(reply.body as Page);
    }
    return pages;
  };

  it('partial list defaults to accepted requests within now ± 24 hours, ascending by event time', async () => {
    const items = await list();
    const want = expected(s.sim.truth(), 'accepted', NOW - DAY, NOW + DAY);
    expect(want.length).toBeGreaterThan(1);
    expect(items.map((i) => i.id).sort()).toEqual(want.map((t) => t.requestId).sort());
    const times = items.map((i) => Date.parse(i.event_dt_utc));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(items.every((i) => i.state === 'accepted')).toBe(true);
  });

  it('partial list items agree with the truth after normalization', async () => {
    const truth = new Map(s.sim.truth().map((t) => [t.requestId, t]));
    const items = await list(`?request__state=completed&${WIDE}`);
    expect(items.length).toBeGreaterThan(50);
    for (const item of items) {
      const t = truth.get(item.id);
      expect(normalizeTimestamp(item.last_updated_timestamp_utc)).toBe(t?.lastUpdatedTimestampUtc);
      expect(normalizeTimestamp(item.event_dt_utc)).toBe(t?.eventDtUtc);
      expect(normalizeTimestamp(item.created_timestamp_utc)).toBe(t?.createdTimestampUtc);
    }
    // Several ISO-8601 forms are served, so clients must normalize instead of comparing strings.
    const forms = new Set(
      items.map((i) =>
        /\.\d{3}Z$/.test(i.last_updated_timestamp_utc)
          ? 'millis'
          : /\+00:00$/.test(i.last_updated_timestamp_utc)
            ? 'offset'
            : 'seconds',
      ),
    );
    expect(forms).toEqual(new Set(['millis', 'offset', 'seconds']));
  });

  it('partial list filters by window inclusively', async () => {
    const items = await list(`?request__state=completed&${WIDE}`);
    const target = items[Math.floor(items.length / 2)] as ListItem;
    const at = epochSec(target.event_dt_utc);
    const exact = await list(`?request__state=completed&date__gte=${at}&date__lte=${at}`);
    expect(exact.map((i) => i.id)).toContain(target.id);
    const after = await list(`?request__state=completed&date__gte=${at + 1}&date__lte=${at + DAY}`);
    expect(after.map((i) => i.id)).not.toContain(target.id);
  });

  it('partial list rejects awaiting and unknown states, and non-integer dates, with field maps', async () => {
    const awaiting = await s.api('/openapi/v1.0/requests/?request__state=awaiting');
    expect(awaiting.status).toBe(400);
    expect(awaiting.body).toEqual({
      request__state: [
        { message: '"awaiting" is not a valid choice.', code: 'common:choice_invalid' },
      ],
    });
    expect((await s.api('/openapi/v1.0/requests/?request__state=bogus')).status).toBe(400);
    const dates = await s.api('/openapi/v1.0/requests/?date__gte=yesterday&date__lte=1.5');
    expect(dates.status).toBe(400);
    expect(Object.keys(dates.body as object).sort()).toEqual(['date__gte', 'date__lte']);
    expect((dates.body as Record<string, { code: string }[]>).date__gte?.[0]?.code).toBe(
      'common:invalid',
    );
  });

  for (const state of ['accepted', 'completed', 'canceled']) {
    it(`full list pages cover exactly the partial list for ${state}, descending, without location ids`, async () => {
      const partial = await list(`?request__state=${state}&${WIDE}`);
      const pages = await allPages(`request__state=${state}&${WIDE}`);
      const rows = pages.flatMap((p) => p.results);
      expect(partial.length).toBeGreaterThan(14); // several pages, so paging is exercised
      expect(pages[0]?.pages).toBe(Math.max(1, Math.ceil(partial.length / 7)));
      expect(pages.every((p, i) => p.page === i + 1 && p.results.length <= 7)).toBe(true);
      const ids = rows.map((r) => r.request_id as string);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(partial.map((i) => i.id).sort());
      const eventOf = new Map(partial.map((i) => [i.id, Date.parse(i.event_dt_utc)]));
      const times = ids.map((id) => eventOf.get(id) as number);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      for (const row of rows) {
        expect(row.pickup_location).not.toHaveProperty('id');
        expect(row.destination_location).not.toHaveProperty('id');
        expect(row.request_current_state).toBe(state);
      }
    });
  }

  it('full list results equal the truth detail without location ids', async () => {
    const truth = new Map(s.sim.truth().map((t) => [t.requestId, t.detail]));
    const rows = (await allPages(`request__state=awaiting&${WIDE}`)).flatMap((p) => p.results);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const detail = structuredClone(truth.get(row.request_id as string)) as Record<
        string,
        Record<string, unknown>
      >;
      delete detail.pickup_location?.id;
      delete detail.destination_location?.id;
      expect(row).toEqual(detail);
      expect(row.transport_agreed_for_time).toBeNull();
    }
  });

  it('full list answers one empty page for an empty window, and 404 past the last page', async () => {
    const empty = await s.api('/openapi/v1.0/request-details/?date__gte=0&date__lte=1000');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ page: 1, pages: 1, results: [] });
    const { pages } = (
      await s.api(`/openapi/v1.0/request-details/?request__state=completed&${WIDE}`)
    ).body as Page;
    const past = await s.api(
      `/openapi/v1.0/request-details/?request__state=completed&${WIDE}&page=${pages + 1}`,
    );
    expect(past.status).toBe(404);
    expect(past.body).toEqual({ message: 'Invalid page.', code: 'common:not_found' });
    expect((await s.api('/openapi/v1.0/request-details/?page=zero')).status).toBe(404);
    expect((await s.api('/openapi/v1.0/request-details/?request__state=nope')).status).toBe(400);
  });

  it('detail serves the truth with location ids, and 403 for unknown ids', async () => {
    const t = s.sim.truth().find((r) => r.isVisible) as TruthRecord;
    const reply = await s.api(`/openapi/v1.0/requests/${t.requestId}/`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(t.detail);
    const body = reply.body as Record<string, Record<string, unknown>>;
    expect(typeof body.pickup_location?.id).toBe('string');
    expect(Array.isArray(body.account?.facilities)).toBe(true);
    const unknown = await s.api('/openapi/v1.0/requests/NOPE1234/');
    expect(unknown.status).toBe(403);
    expect(unknown.body).toEqual({
      message: 'You do not have permission to perform this action.',
      code: 'members:permission_denied',
    });
  });

  it('detail answers 403 for a request no longer available to the provider', async () => {
    const gone = s.sim.truth().find((r) => !r.isVisible) as TruthRecord;
    expect(gone).toBeDefined();
    expect((await s.api(`/openapi/v1.0/requests/${gone.requestId}/`)).status).toBe(403);
  });

  it('exclude_facilities=true makes account.facilities null', async () => {
    const t = s.sim.truth().find((r) => r.isVisible) as TruthRecord;
    const reply = await s.api(`/openapi/v1.0/requests/${t.requestId}/?exclude_facilities=true`);
    const account = (reply.body as { account: Record<string, unknown> }).account;
    expect(account.facilities).toBeNull();
    expect(account.id).toBe((t.detail.account as Record<string, unknown>).id);
  });

  it('account endpoint serves the requesting organization, 404 when unknown', async () => {
    const t = s.sim.truth()[0] as TruthRecord;
    const account = t.detail.account as { id: string; name: string; service_levels: string[] };
    const reply = await s.api(`/openapi/v1.0/accounts/${account.id}/`);
    expect(reply.status).toBe(200);
    const body = reply.body as {
      company_name: string;
      service_levels: string[];
      facilities: object[];
    };
    expect(body.company_name).toBe(account.name);
    expect(body.service_levels).toEqual(account.service_levels);
    expect(body.facilities.length).toBeGreaterThan(0);
    expect(Object.keys(body.facilities[0] ?? {}).sort()).toEqual(['address', 'name']);
    expect((await s.api('/openapi/v1.0/accounts/nobody/')).status).toBe(404);
  });

  it('a mutation moves last_updated in the list; an unavailable request answers 403 and leaves every list', async () => {
    const [item] = await list();
    const id = (item as ListItem).id;
    s.sim.world.editRequest(id, 'note');
    const after = (await list()).find((i) => i.id === id) as ListItem;
    expect(Date.parse(after.last_updated_timestamp_utc)).toBeGreaterThan(
      Date.parse((item as ListItem).last_updated_timestamp_utc),
    );
    s.sim.world.makeUnavailable(id, 'reassigned');
    expect((await s.api(`/openapi/v1.0/requests/${id}/`)).status).toBe(403);
    expect((await list()).map((i) => i.id)).not.toContain(id);
    for (const state of ['awaiting', 'accepted', 'completed', 'canceled']) {
      const rows = (await allPages(`request__state=${state}&${WIDE}`)).flatMap((p) => p.results);
      expect(rows.map((r) => r.request_id)).not.toContain(id);
    }
    expect(s.sim.truth().find((t) => t.requestId === id)?.isVisible).toBe(false);
  });

  it('moving the agreed time by days moves the request out of the default window', async () => {
    const [item] = await list();
    const id = (item as ListItem).id;
    s.sim.world.setAgreedTime(id, T0 + 3 * DAY * 1000);
    expect((await list()).map((i) => i.id)).not.toContain(id);
    const moved = await list(`?date__gte=${NOW + 3 * DAY}&date__lte=${NOW + 3 * DAY}`);
    expect(moved.map((i) => i.id)).toContain(id);
    expect(s.sim.truth().find((t) => t.requestId === id)?.eventDtUtc).toBe(
      new Date(T0 + 3 * DAY * 1000).toISOString(),
    );
  });
});
