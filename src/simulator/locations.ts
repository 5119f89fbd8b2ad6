/**
 * Validation of a location-update body: a JSON array of at most 200 samples, each with numeric
 * lat, lng, alt and timestamp (speed optional). Errors come back as an array with one field map
 * per sample (`{}` for a valid one), as the service reports them.
 */
import { FIELD, json, type FieldError, type FieldMap, type SimResponse } from './http.js';

/** Most samples one call may carry. */
export const MAX_LOCATION_SAMPLES = 200;

const REQUIRED = ['lat', 'lng', 'alt', 'timestamp'] as const;

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value === 'object' ? 'dict' : typeof value === 'string' ? 'str' : typeof value;
}

function checkNumber(value: unknown, required: boolean): FieldError[] {
  if (value === undefined || value === null) return required ? [FIELD.required] : [];
  return typeof value === 'number' && Number.isFinite(value) ? [] : [FIELD.invalidNumber];
}

function checkSample(sample: unknown): FieldMap {
  if (typeof sample !== 'object' || sample === null || Array.isArray(sample)) {
    return {
      non_field_errors: [
        {
          message: `Invalid data. Expected a dictionary, but got ${typeName(sample)}.`,
          code: 'common:invalid',
        },
      ],
    };
  }
  const record = sample as Record<string, unknown>;
  const errors: FieldMap = {};
  for (const field of REQUIRED) {
    const found = checkNumber(record[field], true);
    if (found.length > 0) errors[field] = found;
  }
  const speed = checkNumber(record.speed, false);
  if (speed.length > 0) errors.speed = speed;
  return errors;
}

/** The 400 to answer for `body`, or null when it is a valid batch. */
export function validateLocations(body: unknown): SimResponse | null {
  if (!Array.isArray(body)) {
    return json(400, {
      non_field_errors: [
        {
          message: `Expected a list of items but got type "${typeName(body)}".`,
          code: 'common:not_a_list',
        },
      ],
    });
  }
  if (body.length > MAX_LOCATION_SAMPLES) {
    return json(400, {
      non_field_errors: [
        {
          message: `Ensure this field has no more than ${MAX_LOCATION_SAMPLES} elements.`,
          code: 'common:max_length',
        },
      ],
    });
  }
  const perSample = body.map(checkSample);
  return perSample.some((map) => Object.keys(map).length > 0) ? json(400, perSample) : null;
}
