import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ServiceClient } from '../../../src/api/index.js';
import { receivedDigest } from '../../../src/mirror/digest.js';
import { base, detailRecord, makeClient, mockToken, useNock } from '../../helpers/api.js';

// The full list's pages an idle cycle reads again: a body answered byte for byte as before is
// known by what the pass before read of it, not parsed, written back and hashed record by record.

const FROM = Date.UTC(2026, 0, 28);
const TO = Date.UTC(2026, 0, 29);

useNock();
beforeEach(() => mockToken());
afterEach(() => vi.restoreAllMocks());

/** The body text of a one-page full list holding `records`. */
const bodyOf = (records: Record<string, unknown>[]) =>
  JSON.stringify({ page: 1, pages: 1, results: records });

/** Answers the next call for page 1 with exactly `text`. */
const answer = (text: string) =>
  base()
    .get('/svc/openapi/v1.0/request-details/')
    .query((q) => q.page === '1')
    .reply(200, text, { 'content-type': 'application/json' });

type Asked = { id: string | null; digest: string }[];

/** One pass over the pages: what isKnown was asked, and the pages it yielded. */
async function pass(client: ServiceClient, known: (id: string | null) => boolean) {
  const asked: Asked = [];
  const pages = [];
  for await (const page of client.listRequestDetails({
    from: FROM,
    to: TO,
    state: 'awaiting',
    isKnown: async (records) => {
      asked.push(...records);
      return records.map(({ id }) => known(id));
    },
  }))
    pages.push(page);
  return { asked, pages };
}

/** How many times `text` went through JSON.parse since the spy was set. */
function parsesOf(text: string) {
  const parse = vi.spyOn(JSON, 'parse');
  return () => parse.mock.calls.filter(([argument]) => argument === text).length;
}

const digestOf = (record: unknown) => receivedDigest(JSON.stringify(record));

describe('pages read again', () => {
  const a1 = detailRecord('A1');
  const a2 = detailRecord('A2');

  it('a body read before byte for byte is not parsed: its records are asked about by the digests first read', async () => {
    const text = bodyOf([a1, a2]);
    const { client } = makeClient();
    const parses = parsesOf(text);

    answer(text);
    const first = await pass(client, () => false);
    expect(first.asked).toEqual([
      { id: 'A1', digest: digestOf(a1) },
      { id: 'A2', digest: digestOf(a2) },
    ]);
    expect(first.pages[0]!.items.map((item) => item.request_id)).toEqual(['A1', 'A2']);
    expect(parses()).toBe(1);

    answer(text);
    const second = await pass(client, () => true);
    expect(parses()).toBe(1);
    expect(second.asked).toEqual(first.asked);
    expect(second.pages).toHaveLength(1);
    expect(second.pages[0]).toMatchObject({ page: 1, pages: 1, items: [], known: ['A1', 'A2'] });
  });

  it('a record of a page read before that the caller no longer holds is read and checked in full', async () => {
    const text = bodyOf([a1, a2]);
    const { client } = makeClient();
    answer(text);
    await pass(client, () => false);

    answer(text);
    const { pages } = await pass(client, (id) => id === 'A1');
    const [page] = pages;
    expect(page!.known).toEqual(['A1']);
    expect(page!.items.map((item) => item.request_id)).toEqual(['A2']);
    expect(page!.texts).toEqual([JSON.stringify(a2)]);
    expect(page!.raws).toEqual([a2]);
  });

  it('a body that differs by a byte is read afresh', async () => {
    const { client } = makeClient();
    answer(bodyOf([a1, a2]));
    await pass(client, () => false);

    const edited = detailRecord('A2', { service_level_type: 'ALS' });
    const text = bodyOf([a1, edited]);
    const parses = parsesOf(text);
    answer(text);
    const { asked, pages } = await pass(client, (id) => id === 'A1');
    expect(parses()).toBe(1);
    expect(asked).toEqual([
      { id: 'A1', digest: digestOf(a1) },
      { id: 'A2', digest: digestOf(edited) },
    ]);
    expect(pages[0]!.texts).toEqual([JSON.stringify(edited)]);
  });

  it('holds only the pass before: a body the last pass did not read is parsed again', async () => {
    const { client } = makeClient();
    const text = bodyOf([a1]);
    const parses = parsesOf(text);
    // Read, then read again at every pass: each remembers it for the next.
    for (let round = 0; round < 3; round += 1) {
      answer(text);
      await pass(client, () => true);
    }
    expect(parses()).toBe(1);
    answer(bodyOf([a2]));
    await pass(client, () => false);

    answer(text);
    await pass(client, () => true);
    expect(parses()).toBe(2);
  });

  it('a caller that compares nothing (the backfill) has every page parsed', async () => {
    const text = bodyOf([a1, a2]);
    const { client } = makeClient();
    const parses = parsesOf(text);
    for (let round = 0; round < 2; round += 1) {
      answer(text);
      for await (const page of client.listRequestDetails({ from: FROM, to: TO, state: 'awaiting' }))
        expect(page.items).toHaveLength(2);
    }
    expect(parses()).toBe(2);
  });
});
