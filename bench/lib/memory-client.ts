import type { Drift } from '../../src/api/contract.js';
import { checkRecord } from '../../src/api/records.js';
import { requestDetailContract } from '../../src/api/schemas.js';
import { receivedDigest } from '../../src/mirror/digest.js';
import { parseRecord, requestListItemSchema, type RequestDetail } from '../../src/api/index.js';
import type { DetailsPage, ListItem, SyncClient } from '../../src/sync/ports.js';
import type { SnapshotEntry } from './sim-protocol.js';

type KnownRecords = (records: { id: string | null; digest: string }[]) => Promise<boolean[]>;

/** A snapshot entry with its records parsed as the service client parses them. */
export interface ParsedEntry {
  state: string;
  eventMs: number;
  listItem: ListItem | null;
  detail: RequestDetail;
  raw: unknown;
  /** The record as JSON text, as the service client keeps it. */
  text: string;
  drift: Drift[];
}

/** Parses a snapshot through the client's own schemas (outside any timed part). */
export function parseSnapshot(entries: readonly SnapshotEntry[]): ParsedEntry[] {
  return entries.map((entry) => {
    // As the client checks records: member by member, drift recorded (the default policy).
    const detail = checkRecord<RequestDetail>(requestDetailContract, entry.detail, 'evolve', [
      'request_id',
    ]);
    if (detail.kind !== 'ok')
      throw new Error(`snapshot record rejected: ${detail.rejected.reason}`);
    let listItem: ListItem | null = null;
    if (entry.listItem) {
      const item = parseRecord(requestListItemSchema, entry.listItem, ['id']);
      if (item.kind !== 'ok') throw new Error(`snapshot item rejected: ${item.rejected.reason}`);
      listItem = item.record;
    }
    return {
      state: entry.state,
      eventMs: entry.eventMs,
      listItem,
      detail: detail.record,
      raw: entry.detail,
      text: JSON.stringify(entry.detail),
      drift: detail.drift,
    };
  });
}

/**
 * A SyncClient that answers from parsed records in memory: the sync engine and the store run
 * exactly as against the service, without HTTP, JSON or validation. Lists filter on whole
 * seconds, as the service does. Every record is read "now" (the real clock), long after its
 * last_updated: settled.
 */
export function createMemoryClient(entries: readonly ParsedEntry[], pageSize = 50): SyncClient {
  const inWindow = (entry: ParsedEntry, from: number, to: number, state: string) =>
    entry.state === state &&
    entry.eventMs >= Math.floor(from / 1000) * 1000 &&
    entry.eventMs <= Math.ceil(to / 1000) * 1000;
  const byId = new Map(entries.map((entry) => [entry.detail.request_id, entry]));
  return {
    async listRequests({ from, to, state }) {
      const items = entries
        .filter((entry) => entry.listItem && inWindow(entry, from, to, state))
        .map((entry) => entry.listItem!);
      return { items, rejected: [] };
    },
    async *listRequestDetails(query) {
      const { from, to, state } = query;
      // As the service client does (where it does): records the mirror recognises as stored
      // exactly as sent are passed over, by id, before checking.
      const isKnown = (query as { isKnown?: KnownRecords }).isKnown;
      const rows = entries.filter((entry) => inWindow(entry, from, to, state));
      const pages = Math.max(1, Math.ceil(rows.length / pageSize));
      for (let page = 1; page <= pages; page += 1) {
        const all = rows.slice((page - 1) * pageSize, page * pageSize);
        const known = isKnown
          ? await isKnown(
              all.map((entry) => ({
                id: entry.detail.request_id,
                digest: receivedDigest(entry.text),
              })),
            )
          : all.map(() => false);
        const slice = all.filter((_, i) => !known[i]);
        const result: DetailsPage = {
          page,
          pages,
          items: slice.map((entry) => entry.detail),
          raws: slice.map((entry) => entry.raw),
          drifts: slice.map((entry) => entry.drift),
          rejected: [],
          readAtMs: Date.now(),
        };
        yield Object.assign(result, {
          texts: slice.map((entry) => entry.text),
          ...(isKnown && {
            known: all.filter((_, i) => known[i]).map((entry) => entry.detail.request_id),
          }),
        });
      }
    },
    async getRequest(id) {
      const entry = byId.get(id);
      if (!entry) throw new Error(`no record ${id} in memory`);
      return {
        kind: 'ok',
        record: entry.detail,
        raw: entry.raw,
        drift: entry.drift,
        readAtMs: Date.now(),
      };
    },
  };
}
