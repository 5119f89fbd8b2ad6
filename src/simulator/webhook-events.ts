/**
 * The events the service would push for the simulator's mutations: the v2.0 envelope with its
 * data object, or the v1.0 cue. Actions and statuses follow service-api.md and
 * service-facts.md; where they name none (an edit, a completion, a cancellation after
 * acceptance, a reassignment) the simulator uses its own names, which a receiver must store and
 * acknowledge like any unknown action.
 */
import type { Clock } from '../clock.js';
import { isoFromMs } from '../time.js';
import type { JsonValue, MutationSummary, SimRequest } from './model.js';
import type { Random } from './random.js';
import { drawExtras, idSalt } from './webhook-extras.js';
import { toWebhookData } from './webhook-data.js';
import type { World } from './world.js';

type Members = Record<string, JsonValue>;

const STATUS_BY_STATE: Record<SimRequest['state'], string> = {
  awaiting: 'AVAILABLE',
  accepted: 'ASSIGNED',
  completed: 'COMPLETED',
  canceled: 'CANCELED',
};

const ACTION_BY_REASON: Record<string, string> = {
  declined: 'BROADCAST_DECLINED',
  expired: 'BROADCAST_EXPIRED',
  canceled: 'BROADCAST_CANCELED',
  reassigned: 'REQUEST_REASSIGNED',
};

/** The request_status and action of the v2.0 event for a mutation. */
export function statusAndAction(summary: MutationSummary): { status: string; action: string } {
  if (!summary.isVisible) {
    return {
      status: 'UNAVAILABLE',
      action: ACTION_BY_REASON[summary.reason ?? 'canceled'] ?? 'BROADCAST_CANCELED',
    };
  }
  const status = STATUS_BY_STATE[summary.state];
  switch (summary.kind) {
    case 'created':
    case 'reopened':
      return {
        status,
        action: summary.state === 'awaiting' ? 'BROADCAST_RECEIVED' : 'BROADCAST_ACCEPTED',
      };
    case 'accepted':
      return { status, action: 'BROADCAST_ACCEPTED' };
    case 'completed':
      return { status, action: 'REQUEST_COMPLETED' };
    case 'canceled':
      return { status, action: 'REQUEST_CANCELED' };
    case 'proposal_accepted':
    case 'proposal_declined':
    case 'change_request_accepted':
    case 'change_request_declined':
      return { status, action: summary.kind.toUpperCase() };
    default:
      return { status, action: 'REQUEST_UPDATED' };
  }
}

/** Builds envelopes with chronologically sortable event ids. */
export function createEventFactory({
  world,
  clock,
  rng,
}: {
  world: World;
  clock: Clock;
  rng: Random;
}) {
  let counter = 0;
  const extras = new Map<string, Members>();

  const extrasOf = (request: SimRequest): Members => {
    let drawn = extras.get(request.id);
    if (!drawn) {
      const account = world.accountOf(request);
      const domain = `${account.name
        .toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '')}.example`;
      drawn = drawExtras(rng.fork(idSalt(request.id)), domain);
      extras.set(request.id, drawn);
    }
    return drawn;
  };

  const otherLegOf = (request: SimRequest): SimRequest | null => {
    if (!request.isRoundTripFirst && !request.isRoundTripReturn) return null;
    return (
      world
        .all()
        .find(
          (r) =>
            r.collectionId === request.collectionId &&
            r.id !== request.id &&
            (request.isRoundTripFirst ? r.isRoundTripReturn : r.isRoundTripFirst),
        ) ?? null
    );
  };

  const factory = {
    /** A fresh event id: zero-padded clock time, then a counter, so later ids sort later. */
    nextId(): string {
      counter += 1;
      return `evt_${String(clock.now()).padStart(15, '0')}_${String(counter).padStart(9, '0')}`;
    },
    /** The data object of a request as it is now, or null for an unknown id. */
    dataOf(id: string): Members | null {
      const request = world.get(id);
      if (!request) return null;
      return toWebhookData(request, {
        account: world.accountOf(request),
        extras: extrasOf(request),
        otherLeg: otherLegOf(request),
        drift: world.driftOf(request),
      });
    },
    /** The v2.0 envelope for a mutation, data as of now (null when unavailable). */
    v2(summary: MutationSummary): Members {
      const { status, action } = statusAndAction(summary);
      return {
        event_id: factory.nextId(),
        event_timestamp: isoFromMs(clock.now()),
        service_request_id: summary.requestId,
        request_status: status,
        action,
        data: status === 'UNAVAILABLE' ? null : factory.dataOf(summary.requestId),
      };
    },
    /** The v1.0 cue for a mutation. */
    v1(summary: MutationSummary): Members {
      const eventType = !summary.isVisible
        ? 'request.state.unavailable'
        : summary.kind === 'created' && summary.state === 'awaiting'
          ? 'request.state.available'
          : 'request.data.updated';
      return factory.v1Event(eventType, {
        request_id: summary.requestId,
        request_current_state: summary.state,
      });
    },
    /** A v1.0 envelope with any event body (collection.state.updated, ...). */
    v1Event(eventType: string, event: Members): Members {
      return { event_id: factory.nextId(), event_type: eventType, event };
    },
  };
  return factory;
}

/** The event factory's interface. */
export type EventFactory = ReturnType<typeof createEventFactory>;
