import * as z from 'zod';
import type { Contract } from './contract.js';
import { parseQuickly, safeParse } from './fast-parse.js';
import { normalizeDate, normalizeTimestamp } from '../time.js';

/**
 * zod schemas of the service's resources. Objects are loose: members the service adds later are
 * kept, never dropped, because the mirror stores what it was sent.
 *
 * In request records only the identity and state are required; every other member may be null or
 * absent, and when present must have the documented type. Records are not parsed with these
 * schemas directly but through the schema contract (contract.ts), which records each member that
 * is missing, retyped or unknown and, by policy, repairs or refuses the record.
 * Timestamps come out in the one canonical UTC form of `normalizeTimestamp`.
 */

/**
 * The transforms of the normalized string schemas below, by schema, which fast-parse.ts may run
 * itself; normalizedString adds each.
 */
export const STRING_TRANSFORMS = new Map<z.ZodType, (text: string) => unknown>();

/** A string schema whose output is `normalize`'s; null from it fails with `message`. */
function normalizedString(normalize: (text: string) => string | null, message: string) {
  const schema = z.string().transform((value, ctx) => {
    const normalized = normalize(value);
    if (normalized === null) {
      // The message names the expectation only: the value itself may be patient data.
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return normalized;
  });
  STRING_TRANSFORMS.set(schema, normalize);
  return schema;
}

/** An ISO-8601 timestamp, normalized to canonical UTC with milliseconds. */
export const timestampSchema = normalizedString(
  normalizeTimestamp,
  'expected an ISO-8601 timestamp',
);

/** A calendar date, normalized to YYYY-MM-DD. */
export const dateSchema = normalizedString(normalizeDate, 'expected a YYYY-MM-DD date');

/**
 * `schema.safeParse(value)`, the same result, quicker for a value that passes (fast-parse.ts).
 * The schemas of the service's resources are parsed through this.
 */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown) {
  return safeParse(schema, value, STRING_TRANSFORMS);
}

/** What zod would make of `value` (valid, invalid, or unsure), without zod (fast-parse.ts). */
export function verdictOf(schema: z.ZodType, value: unknown) {
  return parseQuickly(schema, value, STRING_TRANSFORMS);
}

const text = z.string().nullish();
const flag = z.boolean().nullish();
const anyRecord = z.record(z.string(), z.unknown()).nullish();

/** Location object of request records: every member nullable and optional. */
export const locationSchema = z.looseObject({
  id: text,
  lat: z.number().nullish(),
  lng: z.number().nullish(),
  zip: text,
  city: text,
  name: text,
  state: text,
  street: text,
  address: text,
  country: text,
});

/** Account that created a request; `facilities` is null when excluded. */
export const accountSchema = z.looseObject({
  id: text,
  name: text,
  service_levels: z.array(z.string()).nullish(),
  facilities: z.array(z.looseObject({})).nullish(),
});

/** Origin facility of a request. */
export const facilitySchema = z.looseObject({ id: text, name: text });

/** The provider user on a request. */
export const userSchema = z.looseObject({ first_name: text, last_name: text, email: text });

/** Request detail record (detail endpoint, and each element of the full list). */
export const requestDetailSchema = z.looseObject({
  request_id: z.string().min(1),
  patient_first_name: text,
  patient_last_name: text,
  patient_dob: dateSchema.nullish(),
  pickup_location: locationSchema.nullish(),
  destination_location: locationSchema.nullish(),
  transport_pickup_time: timestampSchema.nullish(),
  transport_agreed_for_time: timestampSchema.nullish(),
  service_level_type: text,
  service_type: text,
  account: accountSchema.nullish(),
  facility: facilitySchema.nullish(),
  user: userSchema.nullish(),
  enabled_patient_fields: anyRecord,
  enabled_request_fields: anyRecord,
  request_current_state: z.string().min(1),
  is_round_trip_first_trip: flag,
  is_round_trip_return_trip: flag,
  collection_id: text,
});

/**
 * The detail record's contract. Location ids are absent from the full list's records by design;
 * every other documented member is expected, null or not.
 */
export const requestDetailContract: Contract = {
  schema: requestDetailSchema,
  identity: ['request_id', 'request_current_state'],
  mayBeAbsent: ['pickup_location.id', 'destination_location.id'],
};

/**
 * Partial list element: all four members required, as documented (event_dt_utc falls back to the
 * created time, so it always exists). Change detection and the window hang on them; a rejected
 * element still names its id, so the engine can fetch its detail anyway.
 */
export const requestListItemSchema = z.looseObject({
  id: z.string().min(1),
  state: z.string().min(1),
  created_timestamp_utc: timestampSchema,
  event_dt_utc: timestampSchema,
  last_updated_timestamp_utc: timestampSchema,
});

/** Top level of a full-list page; `results` elements are validated one by one. */
export const fullListPageSchema = z.looseObject({
  page: z.number().int().min(0),
  pages: z.number().int().min(0),
  results: z.array(z.unknown()),
});

/** Outgoing GPS sample; ranges checked so a swapped or millisecond value never leaves. */
export const locationSampleSchema = z.object({
  lat: z.number().min(-90).max(90),
  lng: z.number().min(-180).max(180),
  alt: z.number(),
  speed: z.number().nullish(),
  // Seconds, not milliseconds: 1e11 s is the year 5138, 1e11 ms is 1973.
  timestamp: z.number().positive().lt(1e11, 'expected Unix epoch seconds, not milliseconds'),
});

/** Token endpoint success body. */
export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z
    .string()
    .refine((value) => value.toLowerCase() === 'bearer', 'expected token_type bearer')
    .optional(),
  expires_in: z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
    .pipe(z.number().positive()),
});

/** Accept response: the stored notes. */
export const acceptResponseSchema = z.looseObject({ response_notes: text });

/** Account detail (v1.0 accounts endpoint). */
export const accountDetailSchema = z.looseObject({
  company_name: text,
  service_levels: z.array(z.string()).nullish(),
  facilities: z.array(z.looseObject({ name: text })).nullish(),
});

/** Names the state-update operation accepts. */
export const STATE_NAMES = [
  'en_route',
  'arrived',
  'on_board',
  'arrived_at_destination',
  'completed',
  'canceled',
  'dry_run',
] as const;

/** `request__state` values of the partial list. */
export const LIST_STATES = ['accepted', 'completed', 'canceled'] as const;

/** `request__state` values of the full list (it also takes awaiting). */
export const DETAIL_LIST_STATES = ['awaiting', 'accepted', 'completed', 'canceled'] as const;

/** A state-update name. */
export type StateName = (typeof STATE_NAMES)[number];
/** A partial-list state filter. */
export type ListState = (typeof LIST_STATES)[number];
/** A full-list state filter. */
export type DetailListState = (typeof DETAIL_LIST_STATES)[number];
/** Location object of a request record. */
export type Location = z.output<typeof locationSchema>;
/** Account object of a request record. */
export type Account = z.output<typeof accountSchema>;
/** Facility object of a request record. */
export type Facility = z.output<typeof facilitySchema>;
/** User object of a request record. */
export type User = z.output<typeof userSchema>;
/** A validated request detail record (timestamps canonical). */
export type RequestDetail = z.output<typeof requestDetailSchema>;
/** A validated partial-list element (timestamps canonical). */
export type RequestListItem = z.output<typeof requestListItemSchema>;
/** An outgoing GPS sample. */
export type LocationSample = z.input<typeof locationSampleSchema>;
/** A validated account detail. */
export type AccountDetail = z.output<typeof accountDetailSchema>;
