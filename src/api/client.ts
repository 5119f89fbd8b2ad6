import { isTransportError } from '../errors.js';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { createActions, type LocationsApi, type ServiceActions } from './actions.js';
import { decodeBody } from './attempt.js';
import { invalidArgument, malformedResponse } from './errors.js';
import {
  createHttp,
  type CallEvent,
  type HttpRequest,
  type HttpTimeouts,
  type RetryEvent,
} from './http.js';
import type { Drift, SchemaPolicy } from './contract.js';
import {
  checkRecord,
  checkRecords,
  idOf,
  parseRecords,
  type CheckedRecord,
  type RejectedRecord,
} from './records.js';
import type { RetryPolicy } from './retry.js';
import {
  accountDetailSchema,
  DETAIL_LIST_STATES,
  fullListPageSchema,
  LIST_STATES,
  requestDetailContract,
  requestListItemSchema,
  type AccountDetail,
  type DetailListState,
  type ListState,
  type RequestDetail,
  type RequestListItem,
} from './schemas.js';
import { createAuthorizedSend, createTokenManager } from './token.js';
import { createServiceClock } from './service-clock.js';
import { joinUrl, paths, withQuery } from './urls.js';
import { receivedDigest } from '../mirror/digest.js';
import {
  createPageMemo,
  digestOfBody,
  type MemoPass,
  type PageRecord,
  type ReadPage,
} from './page-memo.js';

/** A page body read before byte for byte, in place of its parse: what its records were. */
class Reread {
  constructor(
    readonly seen: ReadPage,
    readonly body: Uint8Array,
  ) {}
}

/** A page all of whose records the caller holds: nothing to check. */
const NO_RECORDS = { items: [], raws: [], drifts: [], texts: [], rejected: [] };

/** Options of `createServiceClient`. */
export interface ServiceClientOptions {
  authUrl: string;
  hubUrl: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  clock?: Clock;
  log?: Logger;
  /** Random source of the backoff jitter, in [0, 1). */
  random?: () => number;
  /** Requests started per second; 0 means unlimited (default 10). */
  rateLimitPerSec?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
  timeouts?: Partial<HttpTimeouts>;
  userAgent?: string;
  onCall?: (event: CallEvent) => void;
  onRetry?: (event: RetryEvent) => void;
  onRateLimitedMs?: (ms: number) => void;
  /** What to do with a record whose members drifted from the documented shape (default evolve). */
  schemaPolicy?: SchemaPolicy;
  /** Location updates to the hub's v2.0 path (default) or the base's v1.0 path. */
  locationsApi?: LocationsApi;
}

/** A time-window query; times as Date or epoch milliseconds. */
export interface WindowQuery<S extends string> {
  from: Date | number;
  to: Date | number;
  state: S;
  signal?: AbortSignal;
}

/** One page of the full list: valid records, their raw JSON (same index), rejected records. */
export interface DetailPage {
  page: number;
  /** Total pages as of this response; it can change while iterating. */
  pages: number;
  items: RequestDetail[];
  raws: unknown[];
  /** Each item's drifted members (same index). */
  drifts: Drift[][];
  /** Each item's record as JSON text (same index): what a store compares and keeps. */
  texts: string[];
  rejected: RejectedRecord[];
  /** Ids of the records `isKnown` recognised: passed over unchecked. */
  known: string[];
  /** The earliest moment the service can have read these records, on its clock (epoch ms). */
  readAtMs: number;
}

/**
 * Says which records of a page the caller already holds exactly as sent (id, and the received
 * digest of the record's JSON text): those are not checked against the schema, the costliest
 * part of reading an unchanged page.
 */
export type KnownRecords = (records: PageRecord[]) => Promise<boolean[]>;

/** A request's detail, checked, with the moment it was read (see DetailPage.readAtMs). */
export type DetailRead = CheckedRecord<RequestDetail> & { readAtMs: number };

/** The service client the sync engine uses. */
export interface ServiceClient extends ServiceActions {
  /** Partial list: ids, states and last-updated times in the window. */
  listRequests(
    query: WindowQuery<ListState>,
  ): Promise<{ items: RequestListItem[]; rejected: RejectedRecord[] }>;
  /**
   * Full list, page 1 to the latest `pages`, one page per iteration. `pagesAhead`: pages asked
   * for ahead of the one being read (default the client's concurrency).
   */
  listRequestDetails(
    query: WindowQuery<DetailListState> & { isKnown?: KnownRecords; pagesAhead?: number },
  ): AsyncIterable<DetailPage>;
  /** One page of the full list. */
  getRequestDetailsPage(
    query: WindowQuery<DetailListState> & { page: number },
  ): Promise<DetailPage>;
  /** One request's detail; throws `api.not_available` on 403 (missing or not ours). */
  getRequest(
    id: string,
    options?: { excludeFacilities?: boolean; signal?: AbortSignal },
  ): Promise<DetailRead>;
  /** An account's name, service levels and facilities. */
  getAccount(accountId: string, options?: { signal?: AbortSignal }): Promise<AccountDetail>;
  /** Closes the connection pool if the client created it. */
  close(): Promise<void>;
}

// A full list whose `pages` keeps growing this far is broken, not busy.
const MAX_PAGES = 10_000;

function epochSeconds(value: Date | number, round: (x: number) => number): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (!Number.isFinite(ms)) throw invalidArgument('window bound is not a valid time');
  return round(ms / 1000);
}

function windowParams<S extends string>(query: WindowQuery<S>, states: readonly string[]) {
  if (!states.includes(query.state)) {
    throw invalidArgument(`unknown state filter; expected one of ${states.join(', ')}`);
  }
  // Whole seconds that still cover the window: floor the start, ceil the end.
  const gte = epochSeconds(query.from, Math.floor);
  const lte = epochSeconds(query.to, Math.ceil);
  if (gte > lte) throw invalidArgument('window start is after its end');
  return { date__gte: gte, date__lte: lte, request__state: query.state };
}

function checkOptions(options: ServiceClientOptions): void {
  for (const name of ['authUrl', 'hubUrl', 'baseUrl'] as const) {
    let protocol = '';
    try {
      protocol = new URL(options[name]).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'https:' && protocol !== 'http:') {
      throw invalidArgument(`${name} is not an http(s) URL`, { option: name });
    }
  }
  for (const name of ['clientId', 'clientSecret'] as const) {
    if (options[name] === '') throw invalidArgument(`${name} is empty`, { option: name });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Creates the client: token, retries, limits and every endpoint of the service. */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  checkOptions(options);
  const clock = options.clock ?? systemClock;
  // Each layer takes its own `{area: 'api'}` child of the root; children of children would
  // repeat the binding in every line.
  const rootLog = options.log ?? silentLogger();
  const log = rootLog.child({ area: 'api' });
  const http = createHttp({ ...options, clock, log: rootLog });
  // Pages of the full list asked for ahead of the one being read, unless the caller says: as
  // many as may be in flight.
  const concurrency = options.concurrency ?? 4;
  const tokens = createTokenManager({ ...options, http, clock, log: rootLog });
  const send = createAuthorizedSend(http, tokens);
  const base = (path: string) => joinUrl(options.baseUrl, path);
  const read = (req: Omit<HttpRequest, 'method' | 'retry' | 'responseBody'>) =>
    send({ ...req, method: 'GET', retry: 'always', responseBody: 'required' });
  const policy = options.schemaPolicy ?? 'evolve';
  const serviceClock = createServiceClock();

  type DetailsQuery = WindowQuery<DetailListState> & { page: number; isKnown?: KnownRecords };
  const pageMemo = createPageMemo();

  /** The envelope of a full-list page checked; its records not yet. */
  function envelopeOf(body: unknown, status: number, page: number) {
    const endpoint = 'requests.details';
    const top = fullListPageSchema.safeParse(body);
    if (!top.success) {
      throw malformedResponse(
        { endpoint, method: 'GET' },
        status,
        'expected {page, pages, results}',
      );
    }
    warnIfOtherPage(page, top.data.page);
    return { page: top.data.page, pages: top.data.pages, results: top.data.results as unknown[] };
  }

  function warnIfOtherPage(requested: number, answered: number) {
    if (answered === requested) return;
    log.warn({ endpoint: 'requests.details', requested, answered }, 'page mismatch');
  }

  /**
   * One page of the full list, answered. With a memo pass, a body read before byte for byte is
   * neither decoded nor parsed: what the pass knows of it comes back as `reread`, with its bytes.
   */
  async function fetchDetailsPage(query: DetailsQuery, pass?: MemoPass) {
    if (!Number.isInteger(query.page) || query.page < 1) throw invalidArgument('page must be >= 1');
    const params = { ...windowParams(query, DETAIL_LIST_STATES), page: query.page };
    let bodyDigest: string | undefined;
    const res = await read({
      endpoint: 'requests.details',
      url: withQuery(base(paths.requestDetails()), params),
      notFoundScope: 'collection',
      ...(query.signal && { signal: query.signal }),
      ...(pass && {
        reuse: (body: Uint8Array) => {
          bodyDigest = digestOfBody(body);
          const seen = pass.lookup(bodyDigest);
          return seen && new Reread(seen, body);
        },
      }),
    });
    if (res.body instanceof Reread) {
      const { seen } = res.body;
      warnIfOtherPage(query.page, seen.page);
      return { res, page: seen.page, pages: seen.pages, reread: res.body, bodyDigest };
    }
    return { res, ...envelopeOf(res.body, res.status, query.page), bodyDigest, reread: undefined };
  }

  /** The records of a fetched page: those `isKnown` recognises passed over, the rest checked. */
  async function checkDetailsPage(
    query: DetailsQuery,
    fetched: Awaited<ReturnType<typeof fetchDetailsPage>>,
    pass?: MemoPass,
  ): Promise<DetailPage> {
    const { res, pages, reread } = fetched;
    const readAtMs = serviceClock.readAt(res);
    let results = reread ? undefined : fetched.results;
    const texts: string[] = [];
    const textAt = (index: number) => (texts[index] ??= JSON.stringify(results![index]));
    // What the caller is asked about, from the memo when the body was read before.
    const read: ReadPage | undefined =
      reread?.seen ??
      (query.isKnown && {
        page: fetched.page,
        pages,
        records: results!.map((raw, index) => ({
          id: idOf(raw, ['request_id']),
          digest: receivedDigest(textAt(index)),
        })),
      });
    if (pass && fetched.bodyDigest !== undefined && read) pass.remember(fetched.bodyDigest, read);
    const isKnown = query.isKnown && read ? await query.isKnown(read.records) : [];
    const known = (read?.records ?? []).flatMap(({ id }, index) => (isKnown[index] ? [id!] : []));
    if (reread) {
      if (known.length === reread.seen.records.length) {
        return { page: query.page, pages, ...NO_RECORDS, known, readAtMs };
      }
      // Some record of the page is no longer held as sent: the page is read in full after all.
      // Its envelope was checked when these very bytes were first read.
      results = (JSON.parse(decodeBody(reread.body)) as { results: unknown[] }).results;
    }
    const fresh = results!.flatMap((raw, index) => (isKnown[index] ? [] : [{ raw, index }]));
    const checked = checkRecords<RequestDetail>(
      requestDetailContract,
      fresh.map(({ raw }) => raw),
      policy,
      ['request_id', 'id'],
    );
    const indexOf = new Map(fresh.map(({ raw, index }) => [raw, index]));
    return {
      page: query.page,
      pages,
      ...checked,
      texts: checked.raws.map((raw) => textAt(indexOf.get(raw)!)),
      known,
      readAtMs,
    };
  }

  async function getRequestDetailsPage(query: DetailsQuery): Promise<DetailPage> {
    return checkDetailsPage(query, await fetchDetailsPage(query));
  }

  /**
   * Pages 1 to the latest `pages`. isKnown goes to every page (see checkDetailsPage).
   * `pages` is re-read from every response: requests edited meanwhile can add or remove pages.
   * Once page 1 has said how many there are, the pages after the one being read are asked for
   * ahead, up to the client's concurrency, before its records are compared with the mirror and
   * checked: against the hosted service each page is a round trip, and one after another they
   * would be most of a pass over many pages. They are still yielded one at a time, in order.
   */
  async function* detailPages(
    query: Omit<DetailsQuery, 'page'>,
    pagesAhead: number,
    pass?: MemoPass,
  ): AsyncGenerator<DetailPage> {
    const asked = new Map<number, ReturnType<typeof fetchDetailsPage>>();
    let lastAsked = 0;
    const askUpTo = (page: number) => {
      for (; lastAsked < page; lastAsked += 1) {
        const fetched = fetchDetailsPage({ ...query, page: lastAsked + 1 }, pass);
        fetched.catch(() => undefined); // awaited below, or dropped when the caller stops
        asked.set(lastAsked + 1, fetched);
      }
    };
    askUpTo(1);
    for (let page = 1; ; page += 1) {
      let fetched: Awaited<ReturnType<typeof fetchDetailsPage>>;
      try {
        fetched = await asked.get(page)!;
      } catch (error) {
        // Page 1 answered, so the endpoint exists: a 404 further on means the list shrank
        // while we read it ("Invalid page."), which ends the pages rather than the endpoint.
        if (
          page > 1 &&
          isTransportError(error, 'api.endpoint_gone') &&
          error.details.status === 404
        ) {
          log.debug({ endpoint: 'requests.details', page }, 'page past the end');
          return;
        }
        throw error;
      } finally {
        asked.delete(page);
      }
      const isLast = page >= fetched.pages;
      if (!isLast && page + 1 > MAX_PAGES) {
        const ctx = { endpoint: 'requests.details', method: 'GET' };
        throw malformedResponse(ctx, 200, `more than ${MAX_PAGES} pages`, {
          pages: fetched.pages,
        });
      }
      if (!isLast) askUpTo(Math.min(fetched.pages, page + pagesAhead, MAX_PAGES));
      yield await checkDetailsPage({ ...query, page }, fetched, pass);
      if (isLast) return;
    }
  }

  return {
    ...createActions({
      send,
      hubUrl: options.hubUrl,
      baseUrl: options.baseUrl,
      locationsApi: options.locationsApi ?? 'v2',
    }),

    async listRequests(query) {
      const endpoint = 'requests.list';
      const res = await read({
        endpoint,
        url: withQuery(base(paths.requests()), windowParams(query, LIST_STATES)),
        notFoundScope: 'collection',
        ...(query.signal && { signal: query.signal }),
      });
      if (!Array.isArray(res.body)) {
        throw malformedResponse({ endpoint, method: 'GET' }, res.status, 'expected an array');
      }
      const { items, rejected } = parseRecords(requestListItemSchema, res.body, ['id']);
      return { items, rejected };
    },

    async *listRequestDetails(query) {
      // A caller that stops early cancels the page asked ahead (with its retries).
      const stopped = new AbortController();
      const signal = query.signal
        ? AbortSignal.any([query.signal, stopped.signal])
        : stopped.signal;
      // Only a caller that compares records with what it holds gains from the pages read before.
      const pass = query.isKnown ? pageMemo.startPass() : undefined;
      try {
        const { pagesAhead = concurrency, ...pageQuery } = query;
        yield* detailPages({ ...pageQuery, signal }, Math.max(1, pagesAhead), pass);
      } finally {
        stopped.abort();
        pass?.end();
      }
    },

    getRequestDetailsPage,

    async getRequest(id, opts = {}) {
      const endpoint = 'requests.detail';
      const url = withQuery(base(paths.requestDetail(id)), {
        exclude_facilities: opts.excludeFacilities ? 'true' : undefined,
      });
      const res = await read({
        endpoint,
        url,
        requestId: id,
        ...(opts.signal && { signal: opts.signal }),
      });
      if (!isObject(res.body)) {
        const ctx = { endpoint, method: 'GET', requestId: id };
        throw malformedResponse(ctx, res.status, 'expected an object');
      }
      const readAtMs = serviceClock.readAt(res);
      const checked = checkRecord<RequestDetail>(requestDetailContract, res.body, policy, [
        'request_id',
      ]);
      if (checked.kind === 'rejected' && checked.rejected.requestId === null) {
        // The detail was asked for by id, so a record without one still belongs to it.
        const reason = checked.rejected.reason.replace(/^request \(no id\)/, `request ${id}`);
        return {
          kind: 'rejected',
          rejected: { ...checked.rejected, requestId: id, reason },
          readAtMs,
        };
      }
      return { ...checked, readAtMs };
    },

    async getAccount(accountId, opts = {}) {
      const endpoint = 'accounts.detail';
      const res = await read({
        endpoint,
        url: base(paths.account(accountId)),
        ...(opts.signal && { signal: opts.signal }),
      });
      const parsed = accountDetailSchema.safeParse(res.body);
      if (!parsed.success) {
        const members = parsed.error.issues.map((issue) => issue.path.join('.') || '(body)');
        throw malformedResponse(
          { endpoint, method: 'GET' },
          res.status,
          `bad members: ${members.join(', ')}`,
        );
      }
      return parsed.data;
    },

    close: () => http.close(),
  };
}
