/**
 * The mutation driver: random changes of the kind the real service makes while a mirror polls.
 * Half of the targets are drawn from requests within two days of now, so the default polling
 * window sees changes; the rest land anywhere, which only a backfill or a full pass finds.
 * Some edits come twice in the same instant, as when a requester saves a form twice: with
 * last_updated written to the second, the second edit leaves it unchanged.
 */
import { DISPATCHERS } from './catalog.js';
import { editedNote } from './fields.js';
import type { MutationSummary, SimRequest } from './model.js';
import type { Random } from './random.js';
import { eventMs } from './serialize.js';
import type { World } from './world.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type DriverKind =
  | 'accept'
  | 'complete'
  | 'cancel'
  | 'agreed_time'
  | 'edit'
  | 'unavailable'
  | 'create'
  | 'proposal'
  | 'change_request';

const WEIGHTS: readonly (readonly [DriverKind, number])[] = [
  ['edit', 25],
  ['agreed_time', 15],
  ['accept', 12],
  ['complete', 12],
  ['create', 12],
  ['unavailable', 6],
  ['cancel', 5],
  ['proposal', 10],
  ['change_request', 10],
];

/** Random mutations of `world`, decided by `rng`. */
export interface MutationDriver {
  /** Applies `count` random mutations now and returns what each did (a doubled edit: two). */
  mutate(count: number): MutationSummary[];
}

/**
 * A driver over `world`; the same seed and the same calls give the same mutations. An edit is
 * repeated at the current `doubleEditRate()`, decided and written from a stream of its own, so the
 * sequence of targets is the same whatever the rate.
 */
export function createMutationDriver({
  world,
  rng,
  doubleEditRate = () => 0,
}: {
  world: World;
  rng: Random;
  doubleEditRate?: () => number;
}): MutationDriver {
  const twinRng = rng.fork(1);
  // The second edit changes the note from the twin stream: the world's edit stream stays as is.
  const twin = (id: string): MutationSummary =>
    world.apply(
      id,
      'edited',
      (r) => {
        r.requestFields = { ...r.requestFields, note: editedNote(twinRng) };
      },
      { reason: 'note' },
    );

  const candidates = (kind: DriverKind, visible: SimRequest[], nowMs: number): SimRequest[] => {
    switch (kind) {
      case 'accept':
        return visible.filter((r) => r.state === 'awaiting');
      case 'complete':
        return visible.filter((r) => r.state === 'accepted' && eventMs(r) < nowMs);
      case 'cancel':
      case 'agreed_time':
        return visible.filter((r) => r.state === 'accepted');
      case 'edit':
        return visible.filter((r) => r.state === 'awaiting' || r.state === 'accepted');
      case 'unavailable':
        return visible.filter((r) => r.state === 'awaiting' || r.state === 'accepted');
      case 'proposal':
        return visible.filter((r) => r.state === 'awaiting' && r.pendingProposalMs !== null);
      case 'change_request':
        return visible.filter((r) => r.state === 'accepted' && r.pendingChangeMs !== null);
      case 'create':
        return [];
    }
  };

  const target = (pool: SimRequest[], nowMs: number): SimRequest => {
    const near = pool.filter((r) => Math.abs(eventMs(r) - nowMs) <= 2 * DAY);
    return rng.pick(near.length > 0 && rng.chance(0.5) ? near : pool);
  };

  const one = (): MutationSummary => {
    const nowMs = world.now();
    const visible = world.all().filter((r) => r.isVisible);
    const pools = new Map(WEIGHTS.map(([kind]) => [kind, candidates(kind, visible, nowMs)]));
    const available = WEIGHTS.filter(
      ([kind]) => kind === 'create' || (pools.get(kind)?.length ?? 0) > 0,
    );
    // Requesters answer proposals and change requests promptly: half the time, when any wait.
    const answers = available.filter(([k]) => k === 'proposal' || k === 'change_request');
    const kind = rng.weighted(answers.length > 0 && rng.chance(0.5) ? answers : available);
    if (kind === 'create') {
      const state = rng.chance(0.3) ? 'accepted' : 'awaiting';
      return world.createRequests(1, { state })[0] as MutationSummary;
    }
    return apply(world, rng, kind, target(pools.get(kind) ?? [], nowMs));
  };

  return {
    mutate(count) {
      const out: MutationSummary[] = [];
      for (let i = 0; i < count; i += 1) {
        const summary = one();
        out.push(summary);
        const p = doubleEditRate();
        if (summary.kind === 'edited' && p > 0 && twinRng.chance(p)) {
          out.push(twin(summary.requestId));
        }
      }
      return out;
    },
  };
}

function apply(
  world: World,
  rng: Random,
  kind: Exclude<DriverKind, 'create'>,
  r: SimRequest,
): MutationSummary {
  switch (kind) {
    case 'accept':
      // Another dispatcher of the provider accepted it in the web application.
      return world.apply(r.id, 'accepted', (x) => {
        x.state = 'accepted';
        x.user = rng.pick(DISPATCHERS);
        x.pendingProposalMs = null;
        if (rng.chance(0.6)) x.agreedMs = x.pickupMs;
      });
    case 'complete':
      return world.setState(r.id, 'completed');
    case 'cancel':
      return world.setState(r.id, 'canceled');
    case 'agreed_time': {
      // Mostly a small shift; sometimes by days, which moves the request out of a polling window.
      const shift = rng.chance(0.7)
        ? rng.pick([-1, 1]) * rng.int(1, 8) * 15 * MINUTE
        : rng.pick([-1, 1]) * rng.int(1, 5) * DAY;
      return world.setAgreedTime(r.id, eventMs(r) + shift);
    }
    case 'edit':
      return world.editRequest(r.id);
    case 'unavailable': {
      const reason =
        r.state === 'accepted' ? 'reassigned' : rng.pick(['expired', 'canceled'] as const);
      return world.makeUnavailable(r.id, reason);
    }
    case 'proposal': {
      const proposed = r.pendingProposalMs as number;
      if (rng.chance(0.6)) {
        return world.apply(r.id, 'proposal_accepted', (x) => {
          x.state = 'accepted';
          x.user = rng.pick(DISPATCHERS);
          x.agreedMs = proposed;
          x.pendingProposalMs = null;
        });
      }
      return world.apply(r.id, 'proposal_declined', (x) => {
        x.pendingProposalMs = null;
      });
    }
    case 'change_request': {
      const proposed = r.pendingChangeMs as number;
      const isAccepted = rng.chance(0.6);
      return world.apply(
        r.id,
        isAccepted ? 'change_request_accepted' : 'change_request_declined',
        (x) => {
          if (isAccepted) x.agreedMs = proposed;
          x.pendingChangeMs = null;
        },
      );
    }
  }
}
