/**
 * Builds one request (one leg) in a planned state: ids, patient, timestamps in the record's own
 * wire style, responder and configurable fields. The generator decides trips and legs.
 */
import { drawDrift } from './drift.js';
import { DISPATCHERS, FIRST_NAMES, LAST_NAMES, SERVICE_TYPE_BY_LEVEL } from './catalog.js';
import { generatePatientFields, generateRequestFields } from './fields.js';
import type {
  RequestState,
  SimAccount,
  SimLocation,
  SimRequest,
  TimestampStyle,
  UnavailableReason,
} from './model.js';
import type { Random } from './random.js';
import { quantize } from './serialize.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Choice = RequestState | 'gone';
// Rates by pickup time: the past is mostly completed, the next day mostly accepted, later
// requests are often still awaiting a provider. 'gone' requests are no longer visible to us.
const PAST: readonly (readonly [Choice, number])[] = [
  ['completed', 78],
  ['canceled', 12],
  ['accepted', 5],
  ['gone', 5],
];
const NEXT_DAY: readonly (readonly [Choice, number])[] = [
  ['accepted', 60],
  ['awaiting', 25],
  ['canceled', 8],
  ['gone', 7],
];
const LATER: readonly (readonly [Choice, number])[] = [
  ['awaiting', 45],
  ['accepted', 45],
  ['canceled', 5],
  ['gone', 5],
];
const STYLES: readonly (readonly [TimestampStyle, number])[] = [
  ['seconds', 4],
  ['millis', 4],
  ['offset', 2],
];

/** What the generator needs; `usedIds` keeps request ids unique across calls. */
export interface GeneratorContext {
  rng: Random;
  /** Drift profiles come from their own stream, so drawing them leaves the data as it was. */
  driftRng: Random;
  accounts: SimAccount[];
  usedIds: Set<string>;
  pastDays: number;
  futureDays: number;
}

/** A state, whether the provider still sees the request, and why not. */
export interface StatePlan {
  state: RequestState;
  isVisible: boolean;
  reason: UnavailableReason | null;
}

/** One leg: where and when. */
export interface Leg {
  pickupMs: number;
  pickup: SimLocation;
  destination: SimLocation;
  isRoundTripFirst: boolean;
  isRoundTripReturn: boolean;
}

/** Trip parameters shared by the legs of one collection. */
export interface Trip {
  account: SimAccount;
  serviceLevel: string;
  patient: SimRequest['patient'];
  collectionId: string;
  createdMs: number;
}

/** A fresh 8-character upper-case alphanumeric request id. */
export function newRequestId(ctx: GeneratorContext): string {
  for (;;) {
    const id = ctx.rng.alnum(8);
    if (!ctx.usedIds.has(id)) {
      ctx.usedIds.add(id);
      return id;
    }
  }
}

/** A patient: name with the catalog's variety, date of birth. */
export function patient(rng: Random): SimRequest['patient'] {
  const month = String(rng.int(1, 12)).padStart(2, '0');
  const day = String(rng.int(1, 28)).padStart(2, '0');
  return {
    firstName: rng.pick(FIRST_NAMES),
    lastName: rng.pick(LAST_NAMES),
    dob: `${rng.int(1928, 2018)}-${month}-${day}`,
  };
}

/** The state a request generated at `pickupMs` would be in at `nowMs`. */
export function planState(rng: Random, pickupMs: number, nowMs: number): StatePlan {
  const hours = (pickupMs - nowMs) / HOUR;
  const choice = rng.weighted(hours < -2 ? PAST : hours < 24 ? NEXT_DAY : LATER);
  if (choice !== 'gone') return { state: choice, isVisible: true, reason: null };
  const reason = rng.pick<UnavailableReason>(['expired', 'declined', 'canceled', 'reassigned']);
  return { state: reason === 'reassigned' ? 'accepted' : 'awaiting', isVisible: false, reason };
}

/** Builds one leg's request in `plan`'s state; times are quantized to the record's style. */
export function buildRequest(
  ctx: GeneratorContext,
  trip: Trip,
  leg: Leg,
  plan: StatePlan,
  nowMs: number,
): SimRequest {
  const { rng } = ctx;
  const style = rng.weighted(STYLES);
  const serviceType = SERVICE_TYPE_BY_LEVEL[trip.serviceLevel] ?? 'Ambulance';
  const wasAccepted =
    plan.state === 'accepted' ||
    plan.state === 'completed' ||
    (plan.state === 'canceled' && rng.chance(0.5));
  const agreedMs =
    wasAccepted && rng.chance(0.85)
      ? leg.pickupMs + rng.pick([0, 0, 0, 15, 30, -15, 45, 60]) * MINUTE
      : null;
  const createdMs = quantize(trip.createdMs, style);
  // Last touched somewhere between creation and a few hours after the trip, never after now.
  const latest = Math.max(createdMs, Math.min(nowMs, leg.pickupMs + 3 * HOUR));
  const lastUpdatedMs = quantize(createdMs + rng.next() * (latest - createdMs), style);
  const account = trip.account;
  return {
    id: newRequestId(ctx),
    state: plan.state,
    isVisible: plan.isVisible,
    unavailableReason: plan.reason,
    style,
    createdMs,
    pickupMs: quantize(leg.pickupMs, style),
    agreedMs: agreedMs === null ? null : quantize(agreedMs, style),
    lastUpdatedMs: Math.max(lastUpdatedMs, createdMs),
    patient: trip.patient,
    pickup: leg.pickup,
    destination: leg.destination,
    serviceLevel: trip.serviceLevel,
    serviceType,
    accountId: account.id,
    facility: pickFacility(rng, account),
    user: wasAccepted ? rng.pick(DISPATCHERS) : null,
    patientFields: generatePatientFields(rng, serviceType),
    requestFields: generateRequestFields(rng, serviceType),
    isRoundTripFirst: leg.isRoundTripFirst,
    isRoundTripReturn: leg.isRoundTripReturn,
    collectionId: trip.collectionId,
    responseNotes: null,
    progress: null,
    pendingProposalMs: null,
    pendingChangeMs: null,
    drift: drawDrift(ctx.driftRng),
  };
}

function pickFacility(rng: Random, account: SimAccount): { id: string; name: string } {
  const f = rng.pick(account.facilities);
  return { id: f.id, name: f.name };
}
