/**
 * The HTTP vocabulary shared by the router, the handlers and the fault injector: endpoint names,
 * the response a handler returns, the call and action records, and the service's error bodies.
 */
import type { IncomingMessage } from 'node:http';
import type { JsonValue } from './model.js';

/** Every endpoint name, as recorded in `calls` and used to aim faults. */
export const ENDPOINTS = [
  'token',
  'list',
  'details_list',
  'detail',
  'accept',
  'decline',
  'state',
  'locations',
  'locations_v2',
  'change_request',
  'best_time',
  'account',
  'unknown',
] as const;
/** One endpoint name. */
export type Endpoint = (typeof ENDPOINTS)[number];

/** The v1.0 endpoints the service retired on 2026-08-12 (faults `gone` retires them here). */
export const V1_ENDPOINTS = [
  'list',
  'details_list',
  'detail',
  'locations',
  'account',
] as const satisfies readonly Endpoint[];

/** What a handler answers; the server writes it (or a fault mangles it). */
export interface SimResponse {
  status: number;
  /** JSON-encoded unless `raw` is set. */
  body?: unknown;
  /** A pre-encoded body (an HTML error page from a gateway). */
  raw?: { contentType: string; text: string };
  headers?: Record<string, string>;
}

/** Fault names as recorded on a call. */
export type FaultKind = 'gone' | 'token_outage' | 'error' | 'rate_limit' | 'drop' | 'truncate';

/** One HTTP request the simulator received (control endpoints excluded). */
export interface CallRecord {
  /** Clock time the request arrived, canonical ISO. */
  at: string;
  method: string;
  /** The path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Status sent; 0 when the connection was dropped without a response. */
  status: number;
  endpoint: Endpoint;
  /** The request id in the path, when there is one. */
  requestId?: string;
  /** The fault injected into this call, if any. */
  fault?: FaultKind;
}

/** Provider action kinds recorded in `actions`. */
export type ActionKind =
  'accept' | 'decline' | 'state' | 'locations' | 'change_request' | 'best_time';

/** One provider action the simulator accepted (answered 2xx). */
export interface ActionRecord {
  at: string;
  kind: ActionKind;
  requestId: string;
  body: JsonValue;
}

/** A JSON response. */
export function json(status: number, body: unknown, headers?: Record<string, string>): SimResponse {
  return headers ? { status, body, headers } : { status, body };
}

/** The service's `{message, code}` error. */
export function codedError(status: number, message: string, code: string): SimResponse {
  return json(status, { message, code });
}

/** 401 for a missing, unknown or expired token. */
export const NOT_AUTHENTICATED = codedError(
  401,
  'Authentication credentials were not provided.',
  'members:not_authenticated',
);

/** 403 for a request that does not exist or is not visible to the caller. */
export const PERMISSION_DENIED = codedError(
  403,
  'You do not have permission to perform this action.',
  'members:permission_denied',
);

/** 404 for an unknown path or id. */
export const NOT_FOUND = codedError(404, 'Not found.', 'common:not_found');

/** A field error entry, as in `{"name": [{"message": ..., "code": ...}]}`. */
export interface FieldError {
  message: string;
  code: string;
}

/** A validation field map. */
export type FieldMap = Record<string, FieldError[]>;

/** Common field errors, worded as the service words them. */
export const FIELD = {
  required: { message: 'This field is required.', code: 'common:required' },
  invalidNumber: { message: 'A valid number is required.', code: 'common:invalid' },
  invalidInteger: { message: 'A valid integer is required.', code: 'common:invalid' },
  invalidString: { message: 'Not a valid string.', code: 'common:invalid' },
  invalidDatetime: {
    message: 'Datetime has wrong format. Use ISO 8601.',
    code: 'common:invalid',
  },
  maxLength: (n: number) => ({
    message: `Ensure this field has no more than ${n} characters.`,
    code: 'common:max_length',
  }),
  choice: (value: string) => ({
    message: `"${value}" is not a valid choice.`,
    code: 'common:choice_invalid',
  }),
} as const;

/**
 * Reads a request body; null when it is larger than `limitBytes`. An oversized body is still read
 * to the end (and dropped): leaving the loop early would destroy the socket before the 413.
 */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= limitBytes) chunks.push(buffer);
  }
  return size > limitBytes ? null : Buffer.concat(chunks).toString('utf8');
}
