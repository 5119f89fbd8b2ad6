import * as z from 'zod';
import type { Contract } from './contract.js';
import { dateSchema, timestampSchema } from './schemas.js';

/**
 * Webhook payload schemas. Only the identity is required: every other member may be null or
 * absent here, and the schema contract (contract.ts) says which of those is drift, so that a
 * service version that drops or retypes one member does not sink the event. Array members
 * have undocumented element structure and are kept as unknown. Unknown statuses and actions are
 * plain strings: new ones must be stored, not rejected.
 */

const text = z.string().nullish();
const flag = z.boolean().nullish();
const num = z.number().nullish();
const list = z.array(z.unknown()).nullish();
const time = timestampSchema.nullish();

/** Webhook Location object: every member nullable. */
export const webhookLocationSchema = z.looseObject({
  address: text,
  city: text,
  country: text,
  name: text,
  state: text,
  street: text,
  zip: text,
  lat: num,
  lng: num,
});

const location = webhookLocationSchema.nullish();

/** Webhook data object: the full request as the v2.0 webhook carries it. */
export const webhookDataSchema = z.looseObject({
  // core
  service_request_id: z.string().min(1),
  request_current_state: z.string().min(1),
  change_request_enabled: flag,
  service_type: text,
  service_level_type: text,
  scheduling_option: text,
  scheduling_type: text,
  organization_id: text,
  account_name: text,
  facility_name: text,
  collection_id: text,
  service_request_web_url: text,
  // timing
  agreed_for_time: time,
  pickup_date_time: time,
  appointment_datetime: time,
  return_date_time: time,
  revised_eta: time,
  // locations
  pickup_location: location,
  pickup_facility_name: text,
  pickup_facility_type: text,
  pickup_is_home: flag,
  pickup_exact_location: text,
  pickup_room_number: text,
  pickup_stair_steps: text,
  pickup_phone_number: text,
  pickup_phone_number_extension: text,
  destination_location: location,
  destination_facility_name: text,
  destination_facility_type: text,
  destination_is_home: flag,
  destination_exact_location: text,
  destination_address_detail: text,
  destination_room_number: text,
  destination_stair_steps: text,
  destination_phone_number: text,
  destination_phone_number_extension: text,
  departure_airport: location,
  arrival_airport: location,
  // patient
  patient_id: text,
  patient_first_name: text,
  patient_middle_name: text,
  patient_last_name: text,
  patient_date_of_birth: dateSchema.nullish(),
  patient_age: num,
  patient_gender: text,
  patient_weight_lbs: num,
  patient_weight_kg: num,
  patient_height_inches: num,
  patient_girth_inches: num,
  patient_bmi: text,
  patient_over_300p: flag,
  patient_language_spoken: text,
  patient_language_written: text,
  patient_interpreter_required: flag,
  patient_membership_primary_id: text,
  patient_membership_secondary_id: text,
  patient_membership_primary_prefix: text,
  patient_membership_secondary_prefix: text,
  patient_active_membership: flag,
  patient_coverages: list,
  // medical
  diagnosis_notes: text,
  can_ambulate: flag,
  patient_is_ready: flag,
  is_inpatient: flag,
  is_dialysis_trip: flag,
  is_recent_onset: flag,
  hospice: flag,
  o2: text,
  intravenous_therapy: list,
  number_of_drips: text,
  medications: list,
  cct_criteria: list,
  medical_supervision: list,
  mental_health_hold: list,
  isolation_precaution: flag,
  under_isolation: list,
  // equipment
  has_own_wheelchair: flag,
  required_equipment: list,
  special_equipment: list,
  // people
  requester_first_name: text,
  requester_last_name: text,
  requester_email: text,
  requester_phone_number: text,
  requester_phone_number_extension: text,
  responder_user_first_name: text,
  responder_user_last_name: text,
  responder_user_email: text,
  contact_name: text,
  contact_phone: text,
  additional_passenger_name: text,
  additional_passenger_phone: text,
  additional_passenger_relationship: text,
  additional_passenger_weight: text,
  additional_personnel: list,
  authorizing_physician: text,
  receiving_practitioner: text,
  receiving_practitioner_2: text,
  transporting_practitioner: text,
  // request details
  trip_priority_level: text,
  escalated: flag,
  note: text,
  transport_reason: list,
  other_requirements: text,
  // payment and authorization
  payment_option_primary: text,
  payment_option_primary_group_number: text,
  payment_option_primary_subscriber_id: text,
  payment_plan_primary: text,
  payment_option_secondary: text,
  payment_option_secondary_group_number: text,
  payment_option_secondary_subscriber_id: text,
  payment_plan_secondary: text,
  pre_authorization_number: text,
  external_authorization: text,
  travel_authorization_number: text,
  gl_code: text,
  case_number: text,
  // round trip and return
  is_round_trip_first_trip: flag,
  is_round_trip_return_trip: flag,
  round_trip_other_service_request_id: text,
  wait_and_return: flag,
  return_on_will_call: flag,
  // override and dry run
  override_approver: text,
  override_reason: list,
  dry_run_reason: list,
});

/**
 * Members the interface marks non-nullable. The schema accepts null for them, so that one drifted
 * member does not sink the event; the contract records a null or a missing one as drift.
 */
export const WEBHOOK_NON_NULLABLE_MEMBERS = [
  'service_request_id',
  'request_current_state',
  'change_request_enabled',
  'service_type',
  'scheduling_option',
  'scheduling_type',
  'organization_id',
  'account_name',
  'service_request_web_url',
  'requester_first_name',
  'requester_last_name',
  'requester_email',
  'is_round_trip_first_trip',
  'is_round_trip_return_trip',
] as const;

/** The webhook data object's contract: identity, the members never null. */
export const webhookDataContract: Contract = {
  schema: webhookDataSchema,
  identity: ['service_request_id', 'request_current_state'],
  nonNullable: WEBHOOK_NON_NULLABLE_MEMBERS,
};

/**
 * v2.0 envelope with `data` left unvalidated, so an event whose data is malformed can still be
 * deduplicated, ordered and stored; validate `data` with `webhookDataSchema` separately.
 */
export const webhookV2EnvelopeSchema = z.looseObject({
  event_id: z.string().min(1),
  event_timestamp: timestampSchema,
  service_request_id: z.string().min(1),
  request_status: z.string(),
  action: z.string(),
  data: z.unknown(),
});

/** v2.0 envelope with its data validated (null when the request is UNAVAILABLE). */
export const webhookV2EventSchema = webhookV2EnvelopeSchema.extend({
  data: webhookDataSchema.nullish(),
});

/** v1.0 event body: a request event or a standing-order (collection) event. */
export const webhookV1EventBodySchema = z.looseObject({
  request_id: text,
  request_current_state: text,
  collection_id: text,
  collection_current_state: text,
  request_ids: z.array(z.string()).nullish(),
});

/** v1.0 envelope: a cue to fetch the detail, no request data. */
export const webhookV1EnvelopeSchema = z.looseObject({
  event_id: z.union([z.string().min(1), z.number()]),
  event_type: z.string().min(1),
  event: webhookV1EventBodySchema,
});

/** Webhook Location object. */
export type WebhookLocation = z.output<typeof webhookLocationSchema>;
/** Validated webhook data object (timestamps canonical). */
export type WebhookData = z.output<typeof webhookDataSchema>;
/** v2.0 envelope, data unvalidated. */
export type WebhookV2Envelope = z.output<typeof webhookV2EnvelopeSchema>;
/** v2.0 envelope, data validated. */
export type WebhookV2Event = z.output<typeof webhookV2EventSchema>;
/** v1.0 envelope. */
export type WebhookV1Envelope = z.output<typeof webhookV1EnvelopeSchema>;
