/**
 * Records that differ from the documented shape, as the real service's do: a detail member
 * missing, a member nobody documented, webhook flags still in their pre-2026-03-01 string form.
 * Each request draws its profile once, at creation; whether it applies is decided by comparing
 * the profile's `roll` with the current drift rate, so a rate of 0 turns drift off at once and a
 * given rate always picks the same requests.
 */
import type { JsonValue } from './model.js';
import type { Random } from './random.js';

type Members = Record<string, JsonValue>;

/** Documented detail members that some real records lack entirely. */
export const OMITTABLE_MEMBERS = [
  'patient_last_name',
  'service_level_type',
  'collection_id',
  'facility',
] as const;

/** The webhook members that became booleans on 2026-03-01 (service-facts.md). */
export const LEGACY_FLAG_MEMBERS = [
  'can_ambulate',
  'destination_is_home',
  'escalated',
  'has_own_wheelchair',
  'hospice',
  'is_dialysis_trip',
  'is_inpatient',
  'is_recent_onset',
  'isolation_precaution',
  'patient_is_ready',
  'pickup_is_home',
  'return_on_will_call',
  'wait_and_return',
] as const;

const DEPARTMENTS = ['Cardiology', 'Oncology', 'Emergency', 'Nephrology', 'Orthopedics'];

/** How one request's records drift, when its drift applies. */
export interface DriftProfile {
  /** Uniform in [0, 1): the drift applies while it is below the drift rate. */
  roll: number;
  /** Detail members left out (absent, not null). */
  omit: string[];
  /** Undocumented members added at the top level of the detail. */
  extra: Members;
  /** Webhook flags sent as strings ('Yes'/'No' or 'Y'/'N'; null stays null). */
  legacyFlags: boolean;
  legacyFlagWords: readonly [string, string];
  /** Undocumented members added to the webhook data object. */
  dataExtra: Members;
}

/** Draws a profile from `rng` (the simulator's own drift stream, in creation order). */
export function drawDrift(rng: Random): DriftProfile {
  const roll = rng.next();
  const shape = rng.weighted<'omit' | 'extra' | 'both'>([
    ['omit', 4],
    ['extra', 3],
    ['both', 3],
  ]);
  const omitted = rng.pick(OMITTABLE_MEMBERS);
  const extra: Members = rng.chance(0.5)
    ? { transport_mileage_estimate: rng.int(5, 900) / 10 }
    : { requester_department: rng.pick(DEPARTMENTS) };
  const legacyFlags = rng.chance(0.8);
  const legacyFlagWords = rng.chance(0.5) ? (['Yes', 'No'] as const) : (['Y', 'N'] as const);
  const dataExtra: Members = rng.chance(0.5) ? { trip_leg_sequence: rng.int(1, 4) } : {};
  return {
    roll,
    omit: shape === 'extra' ? [] : [omitted],
    extra: shape === 'omit' ? {} : extra,
    legacyFlags,
    legacyFlagWords,
    dataExtra,
  };
}

/** The profile when it applies at drift rate `rate`, else null. */
export function activeDrift(profile: DriftProfile, rate: number): DriftProfile | null {
  return profile.roll < rate ? profile : null;
}

/** The detail (or full-list record) `detail` as a drifting request serves it; changes it in place. */
export function driftDetail(detail: Members, drift: DriftProfile | null): Members {
  if (!drift) return detail;
  for (const name of drift.omit) delete detail[name];
  Object.assign(detail, structuredClone(drift.extra));
  return detail;
}

/** The webhook data object as a drifting request sends it; changes it in place. */
export function driftWebhookData(data: Members, drift: DriftProfile | null): Members {
  if (!drift) return data;
  if (drift.legacyFlags) {
    const [yes, no] = drift.legacyFlagWords;
    for (const name of LEGACY_FLAG_MEMBERS) {
      const value = data[name];
      if (typeof value === 'boolean') data[name] = value ? yes : no;
    }
  }
  Object.assign(data, structuredClone(drift.dataExtra));
  return data;
}
