/**
 * Generates requests: one-way trips, round trips (two legs sharing a collection id) and standing
 * orders (several dialysis legs sharing one), with states at realistic rates for their time:
 * mostly completed in the past, accepted or awaiting in the future, a few canceled or gone.
 */
import type { RequestState, SimRequest } from './model.js';
import { copyLocation, facilityLocation, homeLocation } from './places.js';
import {
  buildRequest,
  patient,
  planState,
  type GeneratorContext,
  type Leg,
  type StatePlan,
  type Trip,
} from './request-builder.js';
import { quantize } from './serialize.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A pickup time within the configured spread around now, on a quarter hour. */
function randomPickupMs(ctx: GeneratorContext, nowMs: number): number {
  const from = nowMs - ctx.pastDays * DAY;
  const span = (ctx.pastDays + ctx.futureDays) * DAY;
  return Math.floor((from + ctx.rng.next() * span) / (15 * MINUTE)) * 15 * MINUTE;
}

/** A trip created some hours or days before its first pickup, and never in the future. */
function newTrip(
  ctx: GeneratorContext,
  firstPickupMs: number,
  nowMs: number,
  kind?: 'dialysis',
): Trip {
  const { rng } = ctx;
  const candidates = kind ? ctx.accounts.filter((a) => a.kind === kind) : ctx.accounts;
  const account = rng.pick(candidates.length > 0 ? candidates : ctx.accounts);
  const lead = rng.int(1 * HOUR, 10 * DAY);
  const createdMs = Math.min(firstPickupMs - lead, nowMs - rng.int(1 * MINUTE, 2 * HOUR));
  return {
    account,
    serviceLevel: rng.pick(account.serviceLevels),
    patient: patient(rng),
    collectionId: rng.uuid(),
    createdMs: createdMs + rng.int(0, 999),
  };
}

/** One to several legs starting near `pickupMs`: a one-way trip, a round trip or a standing order. */
export function generateCollection(
  ctx: GeneratorContext,
  nowMs: number,
  options: { maxLegs: number; pickupMs?: number; shape?: 'single' | 'round_trip' | 'standing' },
): { trip: Trip; legs: Leg[] } {
  const { rng } = ctx;
  const pickupMs = options.pickupMs ?? randomPickupMs(ctx, nowMs);
  const shape =
    options.shape ??
    (options.maxLegs < 2
      ? 'single'
      : rng.weighted<'single' | 'round_trip' | 'standing'>([
          ['single', 65],
          ['round_trip', 20],
          ['standing', 15],
        ]));
  const trip = newTrip(ctx, pickupMs, nowMs, shape === 'standing' ? 'dialysis' : undefined);
  const site = facilityLocation(rng, rng.pick(trip.account.facilities));
  const home = homeLocation(rng);
  if (shape === 'single') {
    const outbound = rng.chance(0.5);
    return {
      trip,
      legs: [
        {
          pickupMs,
          pickup: outbound ? site : home,
          destination: outbound ? home : site,
          isRoundTripFirst: false,
          isRoundTripReturn: false,
        },
      ],
    };
  }
  if (shape === 'round_trip') {
    const returnMs = pickupMs + rng.int(8, 24) * 15 * MINUTE;
    return {
      trip,
      legs: [
        {
          pickupMs,
          pickup: home,
          destination: site,
          isRoundTripFirst: true,
          isRoundTripReturn: false,
        },
        {
          pickupMs: returnMs,
          pickup: copyLocation(rng, site),
          destination: copyLocation(rng, home),
          isRoundTripFirst: false,
          isRoundTripReturn: true,
        },
      ],
    };
  }
  // Standing order: dialysis three times a week at the same time of day.
  const count = Math.min(options.maxLegs, rng.int(3, 5));
  const gaps = [0, 2, 2, 3, 2, 2];
  let at = pickupMs;
  const legs: Leg[] = [];
  for (let i = 0; i < count; i += 1) {
    at += (gaps[i] ?? 2) * DAY;
    legs.push({
      pickupMs: at,
      pickup: copyLocation(rng, home),
      destination: copyLocation(rng, site),
      isRoundTripFirst: false,
      isRoundTripReturn: false,
    });
  }
  return { trip, legs };
}

/** The initial population: `count` requests spread around `nowMs`. */
export function generateRequests(
  ctx: GeneratorContext,
  count: number,
  nowMs: number,
): SimRequest[] {
  const out: SimRequest[] = [];
  while (out.length < count) {
    const { trip, legs } = generateCollection(ctx, nowMs, { maxLegs: count - out.length });
    let firstPlan: StatePlan | null = null;
    for (const leg of legs) {
      // A return leg usually shares its outbound leg's fate.
      const mirror: StatePlan | null =
        firstPlan && (firstPlan.state !== 'completed' || leg.pickupMs < nowMs) ? firstPlan : null;
      const plan: StatePlan =
        leg.isRoundTripReturn && mirror && ctx.rng.chance(0.8)
          ? mirror
          : planState(ctx.rng, leg.pickupMs, nowMs);
      firstPlan ??= plan;
      out.push(buildRequest(ctx, trip, leg, plan, nowMs));
    }
  }
  return out;
}

/** Options for requests created now (new broadcasts, or test fixtures). */
export interface FreshRequestOptions {
  state?: RequestState;
  /** Event time in ms; default between 2 hours and 7 days ahead. */
  pickupMs?: number;
  roundTrip?: boolean;
}

/**
 * Requests created at `nowMs` (one, or two legs of a round trip). When accepted or completed their
 * agreed time equals the requested time, so the event time is exactly `pickupMs`.
 */
export function generateFresh(
  ctx: GeneratorContext,
  nowMs: number,
  options: FreshRequestOptions,
): SimRequest[] {
  const state = options.state ?? 'awaiting';
  const pickupMs =
    options.pickupMs ??
    Math.floor((nowMs + ctx.rng.int(2 * HOUR, 7 * DAY)) / (15 * MINUTE)) * 15 * MINUTE;
  const { trip, legs } = generateCollection(ctx, nowMs, {
    maxLegs: 2,
    pickupMs,
    shape: options.roundTrip ? 'round_trip' : 'single',
  });
  return legs.map((leg) => {
    const request = buildRequest(ctx, trip, leg, { state, isVisible: true, reason: null }, nowMs);
    request.createdMs = quantize(nowMs, request.style);
    request.lastUpdatedMs = request.createdMs;
    request.agreedMs = state === 'accepted' || state === 'completed' ? request.pickupMs : null;
    return request;
  });
}
