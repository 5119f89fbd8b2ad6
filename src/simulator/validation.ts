/**
 * Body and query validation in the service's style: 400 with a field map
 * (`{"field": [{"message", "code"}]}`), or for an array body an array of such maps.
 */
import { normalizeTimestamp } from '../time.js';
import {
  codedError,
  FIELD,
  json,
  type FieldError,
  type FieldMap,
  type SimResponse,
} from './http.js';

/** Parsed JSON or the 400 to answer. An empty body counts as `{}`, as the service treats it. */
export function parseJson(
  raw: string,
): { ok: true; value: unknown } | { ok: false; response: SimResponse } {
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    const detail = error instanceof Error ? error.message : 'invalid JSON';
    return {
      ok: false,
      response: codedError(400, `JSON parse error - ${detail}`, 'common:parse_error'),
    };
  }
}

/** A JSON object body, or the 400 for any other JSON value. */
export function asObject(
  value: unknown,
): { ok: true; value: Record<string, unknown> } | { ok: false; response: SimResponse } {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return { ok: true, value: value as Record<string, unknown> };
  }
  return {
    ok: false,
    response: json(400, {
      non_field_errors: [
        { message: 'Invalid data. Expected a dictionary.', code: 'common:invalid' },
      ],
    }),
  };
}

/** The 400 for a field map. */
export function fieldErrors(errors: FieldMap): SimResponse {
  return json(400, errors);
}

/** Errors for an optional string of at most `max` characters (null allowed). */
export function checkOptionalText(value: unknown, max: number): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'string') return [FIELD.invalidString];
  // Characters, not UTF-16 units: an emoji counts once, as a Python service counts it.
  return [...value].length > max ? [FIELD.maxLength(max)] : [];
}

/** A required ISO-8601 timestamp as epoch ms, or its field errors. */
export function requiredTimestamp(value: unknown): { ms: number } | { errors: FieldError[] } {
  if (value === undefined || value === null || value === '') return { errors: [FIELD.required] };
  if (typeof value !== 'string') return { errors: [FIELD.invalidDatetime] };
  const iso = normalizeTimestamp(value);
  return iso === null ? { errors: [FIELD.invalidDatetime] } : { ms: Date.parse(iso) };
}

/** Drops fields without errors; returns null when nothing is left. */
export function compact(map: Record<string, FieldError[]>): FieldMap | null {
  const entries = Object.entries(map).filter(([, errors]) => errors.length > 0);
  return entries.length === 0 ? null : Object.fromEntries(entries);
}
