/**
 * Control endpoints under `/_sim/` for out-of-process tests and the demo. No auth, not recorded
 * in `calls`, trailing slash optional. They expose what the library API exposes in-process.
 */
import * as z from 'zod';
import { faultOptionsSchema, type FaultOptions } from './faults.js';
import { json, NOT_FOUND, type ActionRecord, type CallRecord, type SimResponse } from './http.js';
import { REQUEST_STATES, type MutationSummary, type TruthRecord } from './model.js';
import { roughnessSchema, type Roughness } from './roughness.js';
import { parseJson } from './validation.js';
import type { World } from './world.js';

/** What the control endpoints operate on. */
export interface ControlTarget {
  world: World;
  truth(): TruthRecord[];
  calls: CallRecord[];
  actions: ActionRecord[];
  mutate(count: number): MutationSummary[];
  setFaults(faults: FaultOptions): void;
  getFaults(): FaultOptions;
  setRoughness(next: Partial<Roughness>): void;
  getRoughness(): Roughness;
  setLatency(ms: number): void;
  resetCalls(): void;
  issuedTokens(): string[];
  stopMutating(): void;
  /** What the webhook sender did, and the events it gave up on (null without webhooks). */
  webhookReport(): WebhookReport | null;
}

/** `GET /_sim/webhooks/`: the sender's counts and each event lost after its last retry. */
export interface WebhookReport {
  stats: Record<string, number>;
  lost: { eventId: string; requestId: string | null; action: string | null }[];
}

const worldOpSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('setAgreedTime'), id: z.string(), value: z.string().nullable() }),
  z.object({ op: z.literal('setPickupTime'), id: z.string(), value: z.string() }),
  z.object({ op: z.literal('setState'), id: z.string(), value: z.enum(REQUEST_STATES) }),
  z.object({
    op: z.literal('makeUnavailable'),
    id: z.string(),
    value: z.enum(['declined', 'expired', 'reassigned', 'canceled']).optional(),
  }),
  z.object({
    op: z.literal('editRequest'),
    id: z.string(),
    value: z.enum(['note', 'location', 'service_level', 'patient']).optional(),
  }),
]);

function badRequest(message: string): SimResponse {
  return json(400, { message, code: 'simulator:bad_request' });
}

function countParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  max: number,
): number | null {
  const value = query.get(name);
  if (value === null) return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 && n <= max ? n : null;
}

function runWorldOp(world: World, body: string): SimResponse {
  const parsed = parseJson(body);
  if (!parsed.ok) return parsed.response;
  const op = worldOpSchema.safeParse(parsed.value);
  if (!op.success) return badRequest(op.error.message);
  const o = op.data;
  if (!world.get(o.id))
    return json(404, { message: `no request ${o.id}`, code: 'simulator:unknown_request' });
  switch (o.op) {
    case 'setAgreedTime':
      return json(200, world.setAgreedTime(o.id, o.value));
    case 'setPickupTime':
      return json(200, world.setPickupTime(o.id, o.value));
    case 'setState':
      return json(200, world.setState(o.id, o.value));
    case 'makeUnavailable':
      return json(200, world.makeUnavailable(o.id, o.value));
    case 'editRequest':
      return json(200, world.editRequest(o.id, o.value));
  }
}

/** Answers one control call; `path` is the part after `/_sim`, without a trailing slash. */
export function handleControl(
  target: ControlTarget,
  method: string,
  path: string,
  query: URLSearchParams,
  body: string,
): SimResponse {
  const key = `${method} ${path}`;
  switch (key) {
    case 'GET /truth':
      return json(200, target.truth());
    case 'GET /calls':
      return json(200, target.calls);
    case 'GET /actions':
      return json(200, target.actions);
    case 'GET /tokens':
      return json(200, target.issuedTokens());
    case 'GET /faults':
      return json(200, target.getFaults());
    case 'GET /roughness':
      return json(200, target.getRoughness());
    case 'GET /webhooks': {
      const report = target.webhookReport();
      return report ? json(200, report) : json(404, { message: 'webhooks are off' });
    }
    case 'POST /reset-calls':
      target.resetCalls();
      return json(200, {});
    case 'POST /stop-mutating':
      // Freezes the truth, so a test can compare a mirror with it at rest.
      target.stopMutating();
      return json(200, {});
    case 'POST /mutate': {
      const count = countParam(query, 'count', 1, 100_000);
      return count === null
        ? badRequest('count must be a whole number from 0 to 100000')
        : json(200, target.mutate(count));
    }
    case 'POST /latency': {
      const ms = countParam(query, 'ms', 0, 600_000);
      if (ms === null) return badRequest('ms must be a whole number from 0 to 600000');
      target.setLatency(ms);
      return json(200, { latencyMs: ms });
    }
    case 'POST /faults': {
      const parsed = parseJson(body);
      if (!parsed.ok) return parsed.response;
      const faults = faultOptionsSchema.safeParse(parsed.value);
      if (!faults.success) return badRequest(faults.error.message);
      target.setFaults(faults.data);
      return json(200, target.getFaults());
    }
    case 'POST /roughness': {
      // Merged into the current settings: a member left out keeps its value.
      const parsed = parseJson(body);
      if (!parsed.ok) return parsed.response;
      const roughness = roughnessSchema.safeParse(parsed.value);
      if (!roughness.success) return badRequest(roughness.error.message);
      target.setRoughness(roughness.data);
      return json(200, target.getRoughness());
    }
    case 'POST /requests': {
      const count = countParam(query, 'count', 1, 10_000);
      const state = query.get('state') ?? 'awaiting';
      if (count === null) return badRequest('count must be a whole number from 0 to 10000');
      if (!(REQUEST_STATES as readonly string[]).includes(state))
        return badRequest(`bad state ${state}`);
      const eventAt = query.get('event_at') ?? undefined;
      const ids = target.world.addRequests(count, {
        state: state as (typeof REQUEST_STATES)[number],
        eventAt: eventAt && /^\d+$/.test(eventAt) ? Number(eventAt) * 1000 : eventAt,
        roundTrip: query.get('round_trip') === 'true',
      });
      return json(200, ids);
    }
    case 'POST /world':
      return runWorldOp(target.world, body);
    default:
      return NOT_FOUND;
  }
}
