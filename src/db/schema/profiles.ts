import { c, table, type Column } from './columns.js';

/*
 * request_profiles: the members of the v2.0 webhook data object that the requests table has no
 * column for (patient, medical, equipment, people, payment, round trip, override), one row per
 * request, each column named exactly as its member. Array members (element structure
 * undocumented) and the airport location objects are JSON in `<member>_json` columns: one row
 * per request keeps the table queryable with plain SQL, and json_each() (SQLite) or
 * jsonb_array_elements() (PostgreSQL) unnests an array when a report needs it.
 *
 * The lists below are the one description of the mapping: the table and the webhook normalizer
 * are both built from them.
 */

/** Members stored as TEXT as sent. */
export const PROFILE_TEXT_MEMBERS = [
  'scheduling_option',
  'scheduling_type',
  'account_name',
  'facility_name',
  'service_request_web_url',
  'pickup_facility_name',
  'pickup_facility_type',
  'pickup_exact_location',
  'pickup_room_number',
  'pickup_stair_steps',
  'pickup_phone_number',
  'pickup_phone_number_extension',
  'destination_facility_name',
  'destination_facility_type',
  'destination_exact_location',
  'destination_address_detail',
  'destination_room_number',
  'destination_stair_steps',
  'destination_phone_number',
  'destination_phone_number_extension',
  'patient_id',
  'patient_middle_name',
  'patient_gender',
  'patient_bmi',
  'patient_language_spoken',
  'patient_language_written',
  'patient_membership_primary_id',
  'patient_membership_secondary_id',
  'patient_membership_primary_prefix',
  'patient_membership_secondary_prefix',
  'diagnosis_notes',
  'o2',
  'number_of_drips',
  'requester_first_name',
  'requester_last_name',
  'requester_email',
  'requester_phone_number',
  'requester_phone_number_extension',
  'contact_name',
  'contact_phone',
  'additional_passenger_name',
  'additional_passenger_phone',
  'additional_passenger_relationship',
  'additional_passenger_weight',
  'authorizing_physician',
  'receiving_practitioner',
  'receiving_practitioner_2',
  'transporting_practitioner',
  'trip_priority_level',
  'note',
  'other_requirements',
  'payment_option_primary',
  'payment_option_primary_group_number',
  'payment_option_primary_subscriber_id',
  'payment_plan_primary',
  'payment_option_secondary',
  'payment_option_secondary_group_number',
  'payment_option_secondary_subscriber_id',
  'payment_plan_secondary',
  'pre_authorization_number',
  'external_authorization',
  'travel_authorization_number',
  'gl_code',
  'case_number',
  'round_trip_other_service_request_id',
  'override_approver',
] as const;

/** Boolean members: 1, 0, or null (not collected). */
export const PROFILE_FLAG_MEMBERS = [
  'change_request_enabled',
  'pickup_is_home',
  'destination_is_home',
  'patient_over_300p',
  'patient_interpreter_required',
  'patient_active_membership',
  'can_ambulate',
  'patient_is_ready',
  'is_inpatient',
  'is_dialysis_trip',
  'is_recent_onset',
  'hospice',
  'isolation_precaution',
  'has_own_wheelchair',
  'escalated',
  'wait_and_return',
  'return_on_will_call',
] as const;

/** Numeric members. */
export const PROFILE_NUMBER_MEMBERS = [
  'patient_age',
  'patient_weight_lbs',
  'patient_weight_kg',
  'patient_height_inches',
  'patient_girth_inches',
] as const;

/** Timestamp members. */
export const PROFILE_TIME_MEMBERS = [
  'appointment_datetime',
  'return_date_time',
  'revised_eta',
] as const;

/** Array and object members: JSON in a column named `<member>_json`. */
export const PROFILE_JSON_MEMBERS = [
  'departure_airport',
  'arrival_airport',
  'patient_coverages',
  'intravenous_therapy',
  'medications',
  'cct_criteria',
  'medical_supervision',
  'mental_health_hold',
  'under_isolation',
  'required_equipment',
  'special_equipment',
  'additional_personnel',
  'transport_reason',
  'override_reason',
  'dry_run_reason',
] as const;

function profileColumns(): Record<string, Column> {
  const columns: Record<string, Column> = {};
  for (const name of PROFILE_TEXT_MEMBERS) columns[name] = c.text();
  for (const name of PROFILE_FLAG_MEMBERS) columns[name] = c.boolean();
  for (const name of PROFILE_NUMBER_MEMBERS) columns[name] = c.real();
  for (const name of PROFILE_TIME_MEMBERS) columns[name] = c.timestamp();
  for (const name of PROFILE_JSON_MEMBERS) columns[`${name}_json`] = c.json();
  return columns;
}

/** One row per request a v2.0 webhook has described: the members only webhooks carry. */
export const requestProfiles = table('request_profiles', {
  request_id: c.text().primaryKey().references('requests', 'request_id'),
  ...profileColumns(),
  /** The event that last wrote this row: a lower event_id is older and never overwrites it. */
  event_id: c.text().notNull(),
  /** event_timestamp of that event. */
  updated_at: c.timestamp().notNull(),
});

/** A request_profiles row as a webhook fills it (event_id and updated_at are the store's). */
export type ProfileRow = Record<string, string | number | null> & { request_id: string };

/** Every request_profiles column a profile row fills, in table order. */
export const PROFILE_COLUMNS: readonly string[] = Object.keys(requestProfiles.columns).filter(
  (name) => name !== 'event_id' && name !== 'updated_at',
);

/**
 * A maker of rows holding each of `columns`, null, to be filled in. A row of a hundred members
 * added one at a time by name falls into V8's dictionary layout, slow to fill, copy and bind
 * (request_profiles' rows took 50 µs each to build and copy, measured); copies of one template,
 * itself made by a spread, keep the fast layout (about 10 µs).
 */
export function rowMaker<Row>(columns: readonly string[]): () => Row {
  const template = { ...Object.fromEntries(columns.map((column) => [column, null])) };
  return () => ({ ...template }) as Row;
}
