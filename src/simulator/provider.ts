/**
 * What the provider's API calls do to the world. Availability rules: an unknown id is 404; a
 * request the provider can no longer see is 403; accept, decline and best-time need a request
 * still awaiting; state, location and change-request need one the provider has accepted.
 */
import { API_USER } from './catalog.js';
import type { SimRequest } from './model.js';
import type { Random } from './random.js';
import { quantize } from './serialize.js';
import type { World } from './world.js';

/** The outcome of a provider action: done, or refused with a status. */
export type ProviderOutcome = { ok: true } | { ok: false; status: 403 | 404 };

/**
 * Provider action names the state-update endpoint accepts. The service's own list, apart from the
 * client's (STATE_NAMES in src/api/schemas.ts), as the simulator imports nothing of the client;
 * test/unit/simulator/state-names.test.ts holds the two equal.
 */
export const STATE_UPDATE_NAMES = [
  'en_route',
  'arrived',
  'on_board',
  'arrived_at_destination',
  'completed',
  'canceled',
  'dry_run',
] as const;

type Need = 'awaiting' | 'assigned';

function check(world: World, id: string, need: Need): ProviderOutcome {
  const request = world.get(id);
  if (!request) return { ok: false, status: 404 };
  if (!request.isVisible) return { ok: false, status: 403 };
  const isAwaiting = request.state === 'awaiting';
  if (need === 'awaiting' ? !isAwaiting : isAwaiting) return { ok: false, status: 403 };
  return { ok: true };
}

/** The provider's actions on a world; `rng` decides whether acceptance agrees a time at once. */
export function createProvider(world: World, rng: Random) {
  const api = { origin: 'api' as const };
  return {
    /** Accept: the API user becomes the responder; usually the requested time is agreed at once. */
    accept(id: string, notes: string | null): ProviderOutcome {
      const outcome = check(world, id, 'awaiting');
      if (!outcome.ok) return outcome;
      world.apply(
        id,
        'accepted',
        (r) => {
          r.state = 'accepted';
          r.user = { ...API_USER };
          r.responseNotes = notes;
          r.pendingProposalMs = null;
          if (rng.chance(0.7)) r.agreedMs = r.pickupMs;
        },
        api,
      );
      return outcome;
    },
    /** Decline: the request becomes unavailable to the provider. */
    decline(id: string, notes: string | null): ProviderOutcome {
      const outcome = check(world, id, 'awaiting');
      if (!outcome.ok) return outcome;
      world.apply(
        id,
        'unavailable',
        (r) => {
          r.isVisible = false;
          r.unavailableReason = 'declined';
          r.responseNotes = notes;
        },
        { ...api, reason: 'declined' },
      );
      return outcome;
    },
    /**
     * A state update. completed and canceled close the request; dry_run (crew arrived, patient not
     * transported) closes it as canceled. On a request already closed it is accepted and recorded
     * without reopening it, so a client retrying after a lost response is not refused.
     */
    reportState(id: string, name: string): ProviderOutcome {
      const outcome = check(world, id, 'assigned');
      if (!outcome.ok) return outcome;
      const next = nextState(name);
      const request = world.get(id) as SimRequest;
      const isClosed = request.state === 'completed' || request.state === 'canceled';
      const kind = next && !isClosed ? next : 'progress';
      world.apply(
        id,
        kind,
        (r) => {
          r.progress = name;
          if (next && !isClosed) r.state = next;
        },
        { ...api, reason: name },
      );
      return outcome;
    },
    /** Location samples change nothing the mirror stores. */
    postLocations(id: string): ProviderOutcome {
      return check(world, id, 'assigned');
    },
    /** A best-time proposal waits for the requester (the mutation driver answers it later). */
    proposeBestTime(id: string, atMs: number): ProviderOutcome {
      const outcome = check(world, id, 'awaiting');
      if (!outcome.ok) return outcome;
      const r = world.get(id) as SimRequest;
      r.pendingProposalMs = quantize(atMs, r.style);
      return outcome;
    },
    /** A change request waits for the requester (the mutation driver answers it later). */
    requestChange(id: string, atMs: number): ProviderOutcome {
      const outcome = check(world, id, 'assigned');
      if (!outcome.ok) return outcome;
      const r = world.get(id) as SimRequest;
      r.pendingChangeMs = quantize(atMs, r.style);
      return outcome;
    },
  };
}

/** The provider actions bound to one world. */
export type Provider = ReturnType<typeof createProvider>;

function nextState(name: string): 'completed' | 'canceled' | null {
  if (name === 'completed') return 'completed';
  if (name === 'canceled' || name === 'dry_run') return 'canceled';
  return null;
}
