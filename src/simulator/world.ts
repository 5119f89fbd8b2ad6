/**
 * The simulator's state and truth: accounts and requests, and the primitive that changes a request
 * (`apply`), which sets last_updated as the roughness says (to the second, or strictly forward)
 * and emits one mutation summary.
 * The named changes (`setAgreedTime`, `makeUnavailable`, ...) are also the API tests use to make a
 * specific mutation happen; they behave as if the service (the requester) made the change.
 */
import type { Clock } from '../clock.js';
import { TransportError } from '../errors.js';
import { isoFromMs, normalizeTimestamp } from '../time.js';
import { DISPATCHERS, SERVICE_TYPE_BY_LEVEL } from './catalog.js';
import { activeDrift, type DriftProfile } from './drift.js';
import { editedNote, generatePatientFields, generateRequestFields } from './fields.js';
import { generateFresh, generateRequests } from './generator.js';
import type { GeneratorContext } from './request-builder.js';
import type {
  MutationKind,
  MutationSummary,
  RequestState,
  SimAccount,
  SimRequest,
  TruthRecord,
  UnavailableReason,
} from './model.js';
import { facilityLocation, generateAccounts, homeLocation } from './places.js';
import type { Random } from './random.js';
import type { Roughness } from './roughness.js';
import { quantize, stepMs, toTruth } from './serialize.js';

/** What an edit changes. */
export type EditKind = 'note' | 'location' | 'service_level' | 'patient';

/** Options for `addRequests`. */
export interface AddRequestsOptions {
  /** Initial state, default 'awaiting'. */
  state?: RequestState;
  /** Event time (ISO string or epoch ms); records written in whole seconds drop milliseconds. */
  eventAt?: string | number;
  /** Each of the `n` becomes a round trip of two legs, so 2n ids come back. */
  roundTrip?: boolean;
}

/** Options for `createRequests`. */
export interface CreateRequestsOptions extends AddRequestsOptions {
  /** Draw the new requests from this stream instead of the world's, leaving the seed's data as is. */
  rng?: Random;
}

/** The simulator's state; every change goes through `apply` and is emitted. */
export interface World {
  readonly accounts: ReadonlyMap<string, SimAccount>;
  /** Clock now, epoch ms. */
  now(): number;
  /** The internal record (live object; change it only through `apply`). */
  get(id: string): SimRequest | undefined;
  /** All requests, in creation order, including unavailable ones. */
  all(): SimRequest[];
  /** Moves on with every change: what was derived from the requests at another is stale. */
  version(): number;
  /** The account that owns `request`. */
  accountOf(request: SimRequest): SimAccount;
  /** What a perfect mirror should hold. */
  truth(): TruthRecord[];
  /** The request's drift profile when drift applies to it at the current rate, else null. */
  driftOf(request: SimRequest): DriftProfile | null;
  /** Runs `change` on the request, sets last_updated (see Roughness) and emits a summary. */
  apply(
    id: string,
    kind: MutationKind,
    change: (request: SimRequest) => void,
    options?: { origin?: 'service' | 'api'; reason?: string },
  ): MutationSummary;
  /** Sets (or clears, with null) the agreed pickup time; this moves event_dt_utc. */
  setAgreedTime(id: string, at: string | number | null): MutationSummary;
  /** Moves the originally requested pickup time. */
  setPickupTime(id: string, at: string | number): MutationSummary;
  /** Puts the request in `state` (accepted sets a dispatcher as responder when none is set). */
  setState(id: string, state: RequestState): MutationSummary;
  /** The request stops being available to the provider: 403 from then on, gone from lists. */
  makeUnavailable(id: string, reason?: UnavailableReason): MutationSummary;
  /** An edit by the requester: a note, a location, the service level or a patient field. */
  editRequest(id: string, what?: EditKind): MutationSummary;
  /** New requests created now; returns their ids. */
  addRequests(n: number, options?: AddRequestsOptions): string[];
  /** As `addRequests`, returning the emitted 'created' summaries. */
  createRequests(n: number, options?: CreateRequestsOptions): MutationSummary[];
}

/** Builds the world and its initial population from `rng`. */
export function createWorld(options: {
  rng: Random;
  clock: Clock;
  requests: number;
  pastDays: number;
  futureDays: number;
  /** The roughness in effect, read at each use so that changes apply at once. */
  roughness: () => Roughness;
  emit: (summary: MutationSummary) => void;
}): World {
  const { clock, emit, roughness } = options;
  const rng = options.rng.fork(1);
  const editRng = options.rng.fork(2);
  const accounts = generateAccounts(rng);
  const ctx: GeneratorContext = {
    rng,
    driftRng: options.rng.fork(3),
    accounts,
    usedIds: new Set(),
    pastDays: options.pastDays,
    futureDays: options.futureDays,
  };
  const accountMap = new Map(accounts.map((a) => [a.id, a]));
  const requests = new Map<string, SimRequest>();
  let version = 0;
  for (const r of generateRequests(ctx, options.requests, clock.now())) requests.set(r.id, r);

  const mustGet = (id: string): SimRequest => {
    const request = requests.get(id);
    if (!request) {
      throw new TransportError({
        code: 'simulator.unknown_request',
        message: `the simulator has no request ${id}`,
      });
    }
    return request;
  };
  const toMs = (at: string | number): number => {
    if (typeof at === 'number') return at;
    const iso = normalizeTimestamp(at);
    if (iso === null) {
      throw new TransportError({ code: 'simulator.bad_time', message: `not a timestamp: ${at}` });
    }
    return Date.parse(iso);
  };
  const accountOf = (request: SimRequest): SimAccount => {
    const account = accountMap.get(request.accountId);
    if (!account) throw new Error(`request ${request.id} has no account`);
    return account;
  };

  const world: World = {
    accounts: accountMap,
    now: () => clock.now(),
    get: (id) => requests.get(id),
    all: () => [...requests.values()],
    version: () => version,
    accountOf,
    truth: () => [...requests.values()].map((r) => toTruth(r, accountOf(r), world.driftOf(r))),
    driftOf: (request) => activeDrift(request.drift, roughness().driftRate),
    apply(id, kind, change, { origin = 'service', reason } = {}) {
      const request = mustGet(id);
      change(request);
      version += 1;
      const nowMs = clock.now();
      request.lastUpdatedMs = nextLastUpdated(request, nowMs, roughness().lastUpdated);
      const summary = summarize(request, kind, nowMs, origin, reason);
      emit(summary);
      return summary;
    },
    setAgreedTime: (id, at) =>
      world.apply(id, 'agreed_time', (r) => {
        r.agreedMs = at === null ? null : quantize(toMs(at), r.style);
      }),
    setPickupTime: (id, at) =>
      world.apply(
        id,
        'edited',
        (r) => {
          r.pickupMs = quantize(toMs(at), r.style);
        },
        { reason: 'pickup_time' },
      ),
    setState: (id, state) => {
      const kind: MutationKind = state === 'awaiting' ? 'reopened' : state;
      return world.apply(id, kind, (r) => {
        r.state = state;
        if (state === 'accepted') r.user ??= editRng.pick(DISPATCHERS);
        if (state === 'awaiting') {
          r.user = null;
          r.agreedMs = null;
        }
      });
    },
    makeUnavailable: (id, reason = 'canceled') =>
      world.apply(
        id,
        'unavailable',
        (r) => {
          r.isVisible = false;
          r.unavailableReason = reason;
        },
        { reason },
      ),
    editRequest: (id, what) => {
      const kind =
        what ?? editRng.pick<EditKind>(['note', 'note', 'location', 'service_level', 'patient']);
      return world.apply(id, 'edited', (r) => applyEdit(editRng, r, accountOf(r), kind), {
        reason: kind,
      });
    },
    addRequests: (n, opts) => world.createRequests(n, opts).map((s) => s.requestId),
    createRequests: (n, opts = {}) => {
      const source = opts.rng ? { ...ctx, rng: opts.rng } : ctx;
      const out: MutationSummary[] = [];
      for (let i = 0; i < n; i += 1) {
        const fresh = generateFresh(source, clock.now(), {
          state: opts.state,
          pickupMs: opts.eventAt === undefined ? undefined : toMs(opts.eventAt),
          roundTrip: opts.roundTrip,
        });
        for (const r of fresh) {
          requests.set(r.id, r);
          version += 1;
          // Created now: last_updated equals created, so no bump as `apply` would make.
          const summary = summarize(r, 'created', clock.now(), 'service');
          emit(summary);
          out.push(summary);
        }
      }
      return out;
    },
  };
  return world;
}

/**
 * The last_updated an edit at `nowMs` writes. 'second' is what the real service does: written to
 * the whole second (whatever the record's style), so a second edit within the same clock second
 * leaves it unchanged and a mirror comparing it for equality misses that edit. 'strict' moves it
 * forward even when the clock has not moved, so every change is visible to such a mirror.
 */
function nextLastUpdated(
  request: SimRequest,
  nowMs: number,
  mode: Roughness['lastUpdated'],
): number {
  if (mode === 'second') return Math.max(request.lastUpdatedMs, Math.floor(nowMs / 1000) * 1000);
  const next = quantize(nowMs, request.style);
  return next > request.lastUpdatedMs ? next : request.lastUpdatedMs + stepMs(request.style);
}

function summarize(
  request: SimRequest,
  kind: MutationKind,
  nowMs: number,
  origin: 'service' | 'api',
  reason?: string,
): MutationSummary {
  return {
    kind,
    requestId: request.id,
    at: isoFromMs(nowMs),
    lastUpdated: isoFromMs(request.lastUpdatedMs),
    state: request.state,
    isVisible: request.isVisible,
    origin,
    ...(reason === undefined ? {} : { reason }),
  };
}

function applyEdit(rng: Random, r: SimRequest, account: SimAccount, kind: EditKind): void {
  switch (kind) {
    case 'note':
      r.requestFields = { ...r.requestFields, note: editedNote(rng) };
      return;
    case 'location':
      if (rng.chance(0.5)) r.destination = homeLocation(rng);
      else r.pickup = facilityLocation(rng, rng.pick(account.facilities));
      return;
    case 'service_level': {
      const others = account.serviceLevels.filter((l) => l !== r.serviceLevel);
      r.serviceLevel = others.length > 0 ? rng.pick(others) : r.serviceLevel;
      const type = SERVICE_TYPE_BY_LEVEL[r.serviceLevel] ?? r.serviceType;
      // A different service type has differently named configurable fields.
      if (type !== r.serviceType) {
        r.serviceType = type;
        r.patientFields = generatePatientFields(rng, type);
        r.requestFields = generateRequestFields(rng, type);
      }
      return;
    }
    case 'patient':
      r.patientFields = { ...r.patientFields, patient_weight_lbs: rng.int(95, 420) };
      return;
  }
}
