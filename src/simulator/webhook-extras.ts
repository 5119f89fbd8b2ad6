/**
 * The members of the webhook data object that the simulator's request model does not hold
 * (requester, payment, equipment, ...): drawn once per request from a stream seeded by the
 * simulator's seed and the request id, so every event about a request carries the same values.
 * Nulls come at realistic rates: most organizations collect only some of these fields.
 */
import { FIRST_NAMES, LAST_NAMES } from './catalog.js';
import type { JsonValue } from './model.js';
import type { Random } from './random.js';

type Members = Record<string, JsonValue>;

const PAYERS = ['Medicare', 'Medicaid', 'Anthem BCBS', 'Aetna', 'UnitedHealthcare', 'Self-pay'];
const EQUIPMENT = ['Stretcher', 'Bariatric stretcher', 'Cardiac monitor', 'Suction', 'Car seat'];
const SPECIAL = ['Oxygen tank', 'Restraints', 'Isolation kit', 'Stair chair'];

/** A stable 32-bit hash of a request id, to seed its stream. */
export function idSalt(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i += 1) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The drawn members, in the order of service-api.md; the data builder adds the rest. */
export function drawExtras(rng: Random, accountDomain: string): Members {
  const maybe = <T extends JsonValue>(p: number, value: () => T): T | null =>
    rng.chance(p) ? value() : null;
  const phone = () => `614-555-${String(rng.int(0, 9999)).padStart(4, '0')}`;
  const person = () => `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
  const id = (prefix: string) => `${prefix}${rng.alnum(9)}`;
  const requesterFirst = rng.pick(FIRST_NAMES);
  const requesterLast = rng.pick(LAST_NAMES);
  const hasPrimary = rng.chance(0.8);
  return {
    scheduling_option: rng.chance(0.8) ? 'specific' : 'asap',
    appointment_offset_min: maybe(0.4, () => rng.int(2, 8) * 15),
    revised_eta_min: maybe(0.3, () => rng.int(-2, 6) * 5),
    pickup_exact_location: maybe(0.3, () => rng.pick(['Main lobby', 'ER bay 2', 'Front desk'])),
    pickup_phone_number: maybe(0.7, phone),
    pickup_phone_number_extension: maybe(0.2, () => String(rng.int(100, 9999))),
    destination_exact_location: maybe(0.3, () =>
      rng.pick(['Dialysis suite', 'Room 12', 'Side door']),
    ),
    destination_address_detail: maybe(0.25, () => rng.pick(['Suite 200', 'Building C', 'Apt 3'])),
    destination_room_number: maybe(0.4, () => `${rng.int(1, 5)}${rng.int(10, 40)}`),
    destination_stair_steps: maybe(0.5, () => String(rng.int(0, 14))),
    destination_phone_number: maybe(0.6, phone),
    destination_phone_number_extension: maybe(0.15, () => String(rng.int(100, 9999))),
    patient_id: maybe(0.85, () => id('MRN-')),
    patient_middle_name: maybe(0.3, () => rng.pick(FIRST_NAMES)),
    patient_gender: maybe(0.9, () => rng.pick(['female', 'male', 'other'])),
    patient_girth_inches: maybe(0.2, () => rng.int(28, 70)),
    patient_language_written: maybe(0.5, () => rng.pick(['English', 'Spanish', 'Vietnamese'])),
    patient_membership_primary_id: hasPrimary ? id('') : null,
    patient_membership_primary_prefix: hasPrimary ? rng.pick(['MCR', 'MCD', 'XYZ']) : null,
    patient_membership_secondary_id: maybe(0.25, () => id('')),
    patient_membership_secondary_prefix: maybe(0.2, () => rng.pick(['SEC', 'ABC'])),
    patient_active_membership: maybe(0.8, () => rng.chance(0.9)),
    patient_coverages: maybe(0.7, () => [
      { payer: rng.pick(PAYERS), member_id: id(''), group_number: maybe(0.5, () => id('G')) },
    ]),
    patient_is_ready: maybe(0.6, () => rng.chance(0.7)),
    is_inpatient: maybe(0.7, () => rng.chance(0.5)),
    is_dialysis_trip: maybe(0.7, () => rng.chance(0.2)),
    is_recent_onset: maybe(0.4, () => rng.chance(0.1)),
    hospice: maybe(0.6, () => rng.chance(0.08)),
    mental_health_hold: maybe(0.15, () => [rng.pick(['72-hour hold', 'Voluntary'])]),
    required_equipment: maybe(0.5, () => rng.sample(EQUIPMENT, rng.int(1, 2))),
    special_equipment: maybe(0.25, () => rng.sample(SPECIAL, 1)),
    requester_first_name: requesterFirst,
    requester_last_name: requesterLast,
    requester_email: `requester${rng.int(1, 999)}@${accountDomain}`,
    requester_phone_number: maybe(0.8, phone),
    requester_phone_number_extension: maybe(0.3, () => String(rng.int(100, 9999))),
    contact_name: maybe(0.5, person),
    contact_phone: maybe(0.5, phone),
    additional_passenger_phone: maybe(0.1, phone),
    additional_passenger_relationship: maybe(0.1, () => rng.pick(['Daughter', 'Spouse', 'Son'])),
    additional_passenger_weight: maybe(0.08, () => String(rng.int(100, 260))),
    additional_personnel: maybe(0.1, () => [rng.pick(['Respiratory therapist', 'Nurse'])]),
    receiving_practitioner: maybe(0.3, () => `Dr. ${rng.pick(LAST_NAMES)}`),
    receiving_practitioner_2: maybe(0.05, () => `Dr. ${rng.pick(LAST_NAMES)}`),
    transporting_practitioner: maybe(0.1, person),
    other_requirements: maybe(0.2, () => rng.pick(['Bring extra blankets', 'Two-person lift'])),
    payment_option_primary: maybe(0.8, () => rng.pick(PAYERS)),
    payment_option_primary_group_number: maybe(0.5, () => id('G')),
    payment_option_primary_subscriber_id: maybe(0.6, () => id('S')),
    payment_plan_primary: maybe(0.5, () => rng.pick(['HMO', 'PPO', 'Part B'])),
    payment_option_secondary: maybe(0.2, () => rng.pick(PAYERS)),
    payment_option_secondary_group_number: maybe(0.1, () => id('G')),
    payment_option_secondary_subscriber_id: maybe(0.15, () => id('S')),
    payment_plan_secondary: maybe(0.1, () => rng.pick(['Medigap', 'Supplemental'])),
    pre_authorization_number: maybe(0.4, () => id('PA-')),
    external_authorization: maybe(0.1, () => id('EXT-')),
    travel_authorization_number: maybe(0.05, () => id('TA-')),
    gl_code: maybe(0.3, () => String(rng.int(4000, 4999))),
    case_number: maybe(0.3, () => id('CASE-')),
    override_approver: maybe(0.05, person),
    override_reason: maybe(0.05, () => [rng.pick(['Level of care exception', 'Out of area'])]),
  };
}
