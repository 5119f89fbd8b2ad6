import { TransportError } from '../errors.js';
import { normalizeTimestamp } from '../time.js';
import { invalidArgument } from './errors.js';
import {
  acceptResponseSchema,
  locationSampleSchema,
  STATE_NAMES,
  type LocationSample,
  type StateName,
} from './schemas.js';
import type { AuthorizedSend } from './token.js';
import { joinUrl, paths } from './urls.js';

/**
 * The provider's actions. Arguments the service would reject are refused here, before anything is
 * sent (`api.invalid_argument`). All actions use retry mode `safe-only` (see http.ts for which
 * failures that still retries and why).
 */

/** Most characters the service stores in response_notes and change_reason. */
export const MAX_NOTES_LENGTH = 450;
/** Most samples the location endpoint takes per call. */
export const MAX_SAMPLES_PER_BATCH = 200;

/** A point in time as the caller has it: Date, epoch milliseconds, or an ISO-8601 string. */
export type TimeInput = Date | number | string;

/** Provider actions of the service client. */
export interface ServiceActions {
  /** Accepts a broadcast request; resolves with the notes the service stored. */
  accept(
    id: string,
    options?: { responseNotes?: string; signal?: AbortSignal },
  ): Promise<{ responseNotes: string | null }>;
  /** Declines a broadcast request. */
  decline(id: string, options?: { responseNotes?: string; signal?: AbortSignal }): Promise<void>;
  /** Reports a state change (en_route, arrived, ...). */
  sendState(
    id: string,
    update: { name: StateName; timestamp: TimeInput; signal?: AbortSignal },
  ): Promise<void>;
  /** Sends GPS samples in order, in sequential batches of at most 200. */
  sendLocations(
    id: string,
    samples: readonly LocationSample[],
    options?: { signal?: AbortSignal },
  ): Promise<{ batches: number }>;
  /** Proposes a new pickup time (v2.0 change request). */
  changeRequest(
    id: string,
    change: { agreedDt: TimeInput; changeReason: string; signal?: AbortSignal },
  ): Promise<void>;
  /** Proposes the best pickup time (v2.0 best time). */
  bestTime(
    id: string,
    proposal: { proposedAgreedDt: TimeInput; signal?: AbortSignal },
  ): Promise<void>;
}

function checkNotes(value: string | undefined, member: string): void {
  // Code points, not UTF-16 units: the service counts characters.
  if (value !== undefined && [...value].length > MAX_NOTES_LENGTH) {
    throw invalidArgument(`${member} is longer than ${MAX_NOTES_LENGTH} characters`, {
      member,
      length: [...value].length,
    });
  }
}

function toIso(value: TimeInput, member: string): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : NaN;
  if (typeof value === 'string') {
    const normalized = normalizeTimestamp(value);
    if (normalized !== null) return normalized;
  } else if (Number.isFinite(ms)) {
    return new Date(ms).toISOString();
  }
  throw invalidArgument(`${member} is not a valid point in time`, { member });
}

function sampleBody(samples: readonly LocationSample[]): Record<string, number>[] {
  return samples.map((sample, index) => {
    const parsed = locationSampleSchema.safeParse(sample);
    if (!parsed.success) {
      // Member paths only: coordinates of a patient pickup are not for logs.
      const members = [
        ...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(sample)')),
      ];
      throw invalidArgument(`location sample ${index} is invalid: ${members.join(', ')}`, {
        sampleIndex: index,
        members,
      });
    }
    const { lat, lng, alt, speed, timestamp } = parsed.data;
    // Only documented members leave; a null speed is left out rather than sent as null.
    return { lat, lng, alt, timestamp, ...(typeof speed === 'number' && { speed }) };
  });
}

/** Which version of the location update to call. */
export type LocationsApi = 'v2' | 'v1';

/** The action endpoints over an authorized sender. */
export function createActions(deps: {
  send: AuthorizedSend;
  hubUrl: string;
  baseUrl: string;
  /** Which location update to call: v2 (hub, default) or v1 (base). */
  locationsApi?: LocationsApi;
}): ServiceActions {
  const { send } = deps;
  const hub = (path: string) => joinUrl(deps.hubUrl, path);
  const action = (
    endpoint: string,
    method: 'POST' | 'PUT',
    url: string,
    id: string,
    json: unknown,
    signal: AbortSignal | undefined,
  ) =>
    send({
      endpoint,
      method,
      url,
      json,
      requestId: id,
      retry: 'safe-only',
      responseBody: 'optional',
      ...(signal && { signal }),
    });

  return {
    async accept(id, options = {}) {
      checkNotes(options.responseNotes, 'response_notes');
      const json =
        options.responseNotes === undefined ? {} : { response_notes: options.responseNotes };
      const res = await action(
        'requests.accept',
        'PUT',
        hub(paths.accept(id)),
        id,
        json,
        options.signal,
      );
      const echoed = acceptResponseSchema.safeParse(res.body);
      if (echoed.success && echoed.data.response_notes !== undefined) {
        return { responseNotes: echoed.data.response_notes };
      }
      // No readable echo (the action still happened): what we sent is what was stored.
      return { responseNotes: options.responseNotes ?? null };
    },

    async decline(id, options = {}) {
      checkNotes(options.responseNotes, 'response_notes');
      const json =
        options.responseNotes === undefined ? {} : { response_notes: options.responseNotes };
      await action('requests.decline', 'PUT', hub(paths.decline(id)), id, json, options.signal);
    },

    async sendState(id, update) {
      if (!(STATE_NAMES as readonly string[]).includes(update.name)) {
        throw invalidArgument(`unknown state name; expected one of ${STATE_NAMES.join(', ')}`, {
          member: 'name',
        });
      }
      const json = { name: update.name, timestamp: toIso(update.timestamp, 'timestamp') };
      await action('requests.state', 'POST', hub(paths.state(id)), id, json, update.signal);
    },

    async sendLocations(id, samples, options = {}) {
      const body = sampleBody(samples); // all validated before the first batch leaves
      const url =
        deps.locationsApi === 'v1'
          ? joinUrl(deps.baseUrl, paths.locations(id))
          : hub(paths.locationsV2(id));
      let batches = 0;
      for (let offset = 0; offset < body.length; offset += MAX_SAMPLES_PER_BATCH) {
        const batch = body.slice(offset, offset + MAX_SAMPLES_PER_BATCH);
        try {
          await action('requests.locations', 'POST', url, id, batch, options.signal);
        } catch (error) {
          // Earlier batches are stored; the caller resends from `deliveredSamples` on.
          if (error instanceof TransportError) {
            Object.assign(error.details, {
              deliveredSamples: offset,
              failedBatch: batches,
              batchOffset: offset,
            });
          }
          throw error;
        }
        batches += 1;
      }
      return { batches };
    },

    async changeRequest(id, change) {
      if (change.changeReason.trim() === '') {
        throw invalidArgument('change_reason is empty', { member: 'change_reason' });
      }
      checkNotes(change.changeReason, 'change_reason');
      const json = {
        agreed_dt: toIso(change.agreedDt, 'agreed_dt'),
        change_reason: change.changeReason,
      };
      const url = hub(paths.changeRequest(id));
      await action('requests.change_request', 'POST', url, id, json, change.signal);
    },

    async bestTime(id, proposal) {
      const json = { proposed_agreed_dt: toIso(proposal.proposedAgreedDt, 'proposed_agreed_dt') };
      const url = hub(paths.bestTime(id));
      await action('requests.best_time', 'PUT', url, id, json, proposal.signal);
    },
  };
}
