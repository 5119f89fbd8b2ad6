/**
 * The v2.0 webhook data object of a simulated request, every documented member present, in the
 * order of service-api.md. Members the model holds come from it (patient, locations, times,
 * responder, and the configurable fields whose names are data members); the rest are drawn once
 * per request (webhook-extras.ts). Timestamps use the request's own wire style, as the detail does.
 * A drifting request (drift.ts) sends its flags in their old string form and undocumented members.
 */
import { driftWebhookData, type DriftProfile } from './drift.js';
import type { JsonValue, SimAccount, SimLocation, SimRequest } from './model.js';
import { eventMs, formatTimestamp } from './serialize.js';

type Members = Record<string, JsonValue>;

const MINUTE = 60_000;
const FACILITY_TYPES: Record<SimAccount['kind'], string> = {
  hospital: 'Hospital',
  snf: 'SNF',
  dialysis: 'Dialysis Center',
  hospice: 'Hospice',
  behavioral: 'Behavioral Health',
};

/** What the builder needs besides the request. */
export interface DataContext {
  account: SimAccount;
  /** Drawn members of this request (drawExtras). */
  extras: Members;
  /** The other leg of a round trip, if any. */
  otherLeg: SimRequest | null;
  /** The request's drift when it applies (World.driftOf); none when absent. */
  drift?: DriftProfile | null;
}

/** The data object of `request` as it is now. */
export function toWebhookData(
  request: SimRequest,
  { account, extras, otherLeg, drift = null }: DataContext,
): Members {
  const ts = (ms: number | null) => (ms === null ? null : formatTimestamp(ms, request.style));
  const fields: Members = { ...request.patientFields, ...request.requestFields };
  const field = (name: string): JsonValue => fields[name] ?? null;
  const offset = extras.appointment_offset_min;
  const eta = extras.revised_eta_min;
  const pickupSite = facilityOf(account, request.pickup);
  const destinationSite = facilityOf(account, request.destination);
  const lbs = typeof fields.patient_weight_lbs === 'number' ? fields.patient_weight_lbs : null;
  const kg = typeof fields.patient_weight_kg === 'number' ? fields.patient_weight_kg : null;
  const user = request.user;
  const x = (name: string): JsonValue => extras[name] ?? null;
  const data: Members = {
    service_request_id: request.id,
    request_current_state: request.state,
    change_request_enabled: request.state === 'accepted',
    service_type: request.serviceType,
    service_level_type: request.serviceLevel,
    scheduling_option: x('scheduling_option'),
    scheduling_type:
      request.isRoundTripFirst || request.isRoundTripReturn ? 'round_trip' : 'one_way',
    organization_id: account.id,
    account_name: account.name,
    facility_name: request.facility.name,
    collection_id: request.collectionId,
    service_request_web_url: `https://app.transport-sim.example/requests/${request.id}/`,
    agreed_for_time: ts(request.agreedMs),
    pickup_date_time: ts(request.pickupMs),
    appointment_datetime:
      typeof offset === 'number' ? ts(request.pickupMs + offset * MINUTE) : null,
    // The return leg's requested time: an agreed-time change of that leg is its own event.
    return_date_time: request.isRoundTripFirst && otherLeg ? ts(otherLeg.pickupMs) : null,
    revised_eta:
      request.state === 'accepted' && typeof eta === 'number'
        ? ts(eventMs(request) + eta * MINUTE)
        : null,
    pickup_location: location(request.pickup),
    pickup_facility_name: pickupSite ? request.pickup.name : null,
    pickup_facility_type: pickupSite ? FACILITY_TYPES[account.kind] : null,
    pickup_is_home: !pickupSite,
    pickup_exact_location: x('pickup_exact_location'),
    pickup_room_number: field('pickup_room_number'),
    pickup_stair_steps: text(field('pickup_stair_steps')),
    pickup_phone_number: x('pickup_phone_number'),
    pickup_phone_number_extension: x('pickup_phone_number_extension'),
    destination_location: location(request.destination),
    destination_facility_name: destinationSite ? request.destination.name : null,
    destination_facility_type: destinationSite ? FACILITY_TYPES[account.kind] : null,
    destination_is_home: !destinationSite,
    destination_exact_location: x('destination_exact_location'),
    destination_address_detail: x('destination_address_detail'),
    destination_room_number: x('destination_room_number'),
    destination_stair_steps: x('destination_stair_steps'),
    destination_phone_number: x('destination_phone_number'),
    destination_phone_number_extension: x('destination_phone_number_extension'),
    departure_airport: airport(field('departure_airport')),
    arrival_airport: airport(field('arrival_airport')),
    patient_id: x('patient_id'),
    patient_first_name: request.patient.firstName,
    patient_middle_name: x('patient_middle_name'),
    patient_last_name: request.patient.lastName,
    patient_date_of_birth: request.patient.dob,
    patient_age: ageAt(request.patient.dob, request.createdMs),
    patient_gender: x('patient_gender'),
    patient_weight_lbs: lbs ?? (kg === null ? null : Math.round(kg * 22.046) / 10),
    patient_weight_kg: kg ?? (lbs === null ? null : Math.round(lbs * 4.5359) / 10),
    patient_height_inches: field('patient_height_inches'),
    patient_girth_inches: x('patient_girth_inches'),
    patient_bmi: bmi(lbs, field('patient_height_inches')),
    patient_over_300p: field('patient_over_300p') ?? (lbs === null ? null : lbs > 300),
    patient_language_spoken: field('patient_language_spoken'),
    patient_language_written: x('patient_language_written'),
    patient_interpreter_required: field('patient_interpreter_required'),
    patient_membership_primary_id: x('patient_membership_primary_id'),
    patient_membership_secondary_id: x('patient_membership_secondary_id'),
    patient_membership_primary_prefix: x('patient_membership_primary_prefix'),
    patient_membership_secondary_prefix: x('patient_membership_secondary_prefix'),
    patient_active_membership: x('patient_active_membership'),
    patient_coverages: x('patient_coverages'),
    diagnosis_notes: field('diagnosis_notes'),
    can_ambulate: field('can_ambulate'),
    patient_is_ready: x('patient_is_ready'),
    is_inpatient: x('is_inpatient'),
    is_dialysis_trip: x('is_dialysis_trip'),
    is_recent_onset: x('is_recent_onset'),
    hospice: x('hospice'),
    o2: field('o2'),
    intravenous_therapy: field('intravenous_therapy'),
    number_of_drips: field('number_of_drips'),
    medications: field('medications'),
    cct_criteria: field('cct_criteria'),
    medical_supervision: field('medical_supervision'),
    mental_health_hold: x('mental_health_hold'),
    isolation_precaution: field('isolation_precaution'),
    under_isolation: field('under_isolation'),
    has_own_wheelchair: field('has_own_wheelchair'),
    required_equipment: x('required_equipment'),
    special_equipment: x('special_equipment'),
    requester_first_name: x('requester_first_name'),
    requester_last_name: x('requester_last_name'),
    requester_email: x('requester_email'),
    requester_phone_number: x('requester_phone_number'),
    requester_phone_number_extension: x('requester_phone_number_extension'),
    responder_user_first_name: user?.first_name ?? null,
    responder_user_last_name: user?.last_name ?? null,
    responder_user_email: user?.email ?? null,
    contact_name: x('contact_name'),
    contact_phone: x('contact_phone'),
    // The request fields say '' when a passenger was asked about and none comes: null here.
    additional_passenger_name: field('additional_passenger_name') || null,
    additional_passenger_phone: x('additional_passenger_phone'),
    additional_passenger_relationship: x('additional_passenger_relationship'),
    additional_passenger_weight: x('additional_passenger_weight'),
    additional_personnel: x('additional_personnel'),
    authorizing_physician: field('authorizing_physician'),
    receiving_practitioner: x('receiving_practitioner'),
    receiving_practitioner_2: x('receiving_practitioner_2'),
    transporting_practitioner: x('transporting_practitioner'),
    trip_priority_level: field('trip_priority_level'),
    escalated: field('escalated'),
    note: field('note'),
    transport_reason: field('transport_reason'),
    other_requirements: x('other_requirements'),
    payment_option_primary: x('payment_option_primary'),
    payment_option_primary_group_number: x('payment_option_primary_group_number'),
    payment_option_primary_subscriber_id: x('payment_option_primary_subscriber_id'),
    payment_plan_primary: x('payment_plan_primary'),
    payment_option_secondary: x('payment_option_secondary'),
    payment_option_secondary_group_number: x('payment_option_secondary_group_number'),
    payment_option_secondary_subscriber_id: x('payment_option_secondary_subscriber_id'),
    payment_plan_secondary: x('payment_plan_secondary'),
    pre_authorization_number: x('pre_authorization_number'),
    external_authorization: x('external_authorization'),
    travel_authorization_number: x('travel_authorization_number'),
    gl_code: x('gl_code'),
    case_number: x('case_number'),
    is_round_trip_first_trip: request.isRoundTripFirst,
    is_round_trip_return_trip: request.isRoundTripReturn,
    round_trip_other_service_request_id: otherLeg?.id ?? null,
    wait_and_return: field('wait_and_return'),
    return_on_will_call: field('return_on_will_call'),
    override_approver: x('override_approver'),
    override_reason: x('override_reason'),
    dry_run_reason: request.progress === 'dry_run' ? ['Patient not ready'] : null,
  };
  return driftWebhookData(data, drift);
}

/** The webhook Location object: the detail's members without the id. */
function location(loc: SimLocation): Members {
  const { address, city, country, name, state, street, zip, lat, lng } = loc;
  return { address, city, country, name, state, street, zip, lat, lng };
}

function facilityOf(account: SimAccount, loc: SimLocation): boolean {
  return account.facilities.some((f) => f.street === loc.street && f.city === loc.city);
}

/** Request fields carry airports as codes; webhooks carry a location with the code as its name. */
function airport(code: JsonValue): JsonValue {
  if (typeof code !== 'string') return null;
  return {
    address: null,
    city: null,
    country: 'US',
    name: code,
    state: null,
    street: null,
    zip: null,
    lat: null,
    lng: null,
  };
}

function bmi(lbs: number | null, inches: JsonValue): string | null {
  if (lbs === null || typeof inches !== 'number' || inches <= 0) return null;
  return ((703 * lbs) / (inches * inches)).toFixed(1);
}

function text(value: JsonValue): JsonValue {
  return value === null ? null : String(value);
}

function ageAt(dob: string, atMs: number): number {
  const born = new Date(`${dob}T00:00:00Z`);
  const at = new Date(atMs);
  let age = at.getUTCFullYear() - born.getUTCFullYear();
  const beforeBirthday =
    at.getUTCMonth() < born.getUTCMonth() ||
    (at.getUTCMonth() === born.getUTCMonth() && at.getUTCDate() < born.getUTCDate());
  if (beforeBirthday) age -= 1;
  return age;
}
