/**
 * The configurable `enabled_patient_fields` and `enabled_request_fields`. Their member names vary
 * by service type and every value may be null, with mixed types (strings, numbers, booleans,
 * arrays, objects), which is exactly what a mirror must store without a fixed schema.
 */
import { NOTES, TRANSPORT_REASONS } from './catalog.js';
import type { JsonValue } from './model.js';
import type { Random } from './random.js';

type Fields = Record<string, JsonValue>;

/** Roughly one value in eight is null: the requesting organization did not collect it. */
function maybe(rng: Random, value: () => JsonValue): JsonValue {
  return rng.chance(0.12) ? null : value();
}

function weightLbs(rng: Random): JsonValue {
  return maybe(rng, () => rng.int(95, 420));
}

/** Patient fields for a request of `serviceType`. */
export function generatePatientFields(rng: Random, serviceType: string): Fields {
  const common: Fields = {
    patient_weight_lbs: weightLbs(rng),
    patient_language_spoken: maybe(rng, () =>
      rng.pick(['English', 'Spanish', 'Vietnamese', 'Somali', 'Deutsch']),
    ),
  };
  switch (serviceType) {
    case 'Ambulance':
    case 'Stretcher Van':
      return {
        ...common,
        patient_height_inches: maybe(rng, () => rng.int(55, 78)),
        o2: maybe(rng, () => (rng.chance(0.6) ? 'None' : `${rng.int(1, 6)} L/min`)),
        can_ambulate: maybe(rng, () => rng.chance(0.3)),
        isolation_precaution: maybe(rng, () => rng.chance(0.15)),
        under_isolation: maybe(rng, () =>
          rng.chance(0.8) ? [] : rng.sample(['contact', 'droplet', 'airborne'], rng.int(1, 2)),
        ),
      };
    case 'Critical Care Ambulance':
      return {
        ...common,
        o2: maybe(rng, () => `${rng.int(2, 15)} L/min`),
        intravenous_therapy: maybe(rng, () =>
          rng.sample(['Peripheral IV', 'Central line', 'PICC'], rng.int(1, 2)),
        ),
        number_of_drips: maybe(rng, () => String(rng.int(0, 4))),
        medications: maybe(rng, () => [
          { name: 'Heparin', dose: `${rng.int(5, 20) * 100} u/hr` },
          { name: 'Norepinephrine', dose: `${rng.int(1, 10)} mcg/min` },
        ]),
        cct_criteria: maybe(rng, () =>
          rng.sample(['Ventilator', 'Cardiac drips', 'Balloon pump'], rng.int(1, 2)),
        ),
      };
    case 'Wheelchair Van':
      return {
        ...common,
        has_own_wheelchair: maybe(rng, () => rng.chance(0.5)),
        patient_over_300p: maybe(rng, () => rng.chance(0.1)),
      };
    case 'Air Ambulance':
      return {
        patient_weight_kg: maybe(rng, () => rng.int(40, 190)),
        o2: maybe(rng, () => `${rng.int(2, 15)} L/min`),
        medical_supervision: maybe(rng, () => ['Flight nurse', 'Paramedic']),
      };
    default:
      return {
        ...common,
        patient_interpreter_required: maybe(rng, () => rng.chance(0.1)),
        can_ambulate: maybe(rng, () => rng.chance(0.9)),
      };
  }
}

/** Request fields for a request of `serviceType`. */
export function generateRequestFields(rng: Random, serviceType: string): Fields {
  const common: Fields = {
    note: maybe(rng, () => rng.pick(NOTES)),
    transport_reason: maybe(rng, () => [rng.pick(TRANSPORT_REASONS)]),
    trip_priority_level: maybe(rng, () => rng.pick(['Routine', 'Routine', 'Urgent', 'STAT'])),
  };
  switch (serviceType) {
    case 'Ambulance':
    case 'Critical Care Ambulance':
    case 'Stretcher Van':
      return {
        ...common,
        diagnosis_notes: maybe(rng, () =>
          rng.pick([
            'CHF exacerbation',
            'Hip fx, non-weight-bearing',
            'COPD',
            'CVA — L side weakness',
          ]),
        ),
        pickup_stair_steps: maybe(rng, () => rng.int(0, 12)),
        pickup_room_number: maybe(
          rng,
          () => `${rng.int(1, 6)}${rng.int(10, 60)}${rng.pick(['', 'A', 'B'])}`,
        ),
        authorizing_physician: maybe(
          rng,
          () => `Dr. ${rng.pick(['Okafor', 'Schäfer', "O'Hara", 'Ng'])}`,
        ),
      };
    case 'Wheelchair Van':
    case 'Ambulatory':
      return {
        ...common,
        wait_and_return: maybe(rng, () => rng.chance(0.3)),
        additional_passenger_name: maybe(rng, () => (rng.chance(0.7) ? '' : 'Family member')),
        return_on_will_call: maybe(rng, () => rng.chance(0.2)),
      };
    case 'Air Ambulance':
      return {
        ...common,
        departure_airport: maybe(rng, () => 'KCMH'),
        arrival_airport: maybe(rng, () => rng.pick(['KCLE', 'KORD', 'KPIT'])),
      };
    default:
      return { ...common, escalated: maybe(rng, () => rng.chance(0.05)) };
  }
}

/** A changed requester note, as an edit by the requesting organization. */
export function editedNote(rng: Random): JsonValue {
  return `${rng.pick(NOTES)} (updated ${rng.int(1, 99)})`.trim();
}
