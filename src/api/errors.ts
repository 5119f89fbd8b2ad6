import type { ErrorCode } from '../error-codes.js';
import { TransportError } from '../errors.js';
import { setOwn } from '../json.js';

/**
 * Error factories for the service client. Every error carries a stable `api.*` code and details
 * that are safe to log: status, endpoint name, method, request id, and the service's own
 * `code`/`message`. Never a body (bodies carry patient data) and never a token or secret.
 */

/** Which call an error belongs to. */
export interface CallContext {
  /** Stable endpoint name, e.g. `requests.detail`. */
  endpoint: string;
  method: string;
  requestId?: string | undefined;
}

/** One validation message of the service, as in `{"name": [{"message": ..., "code": ...}]}`. */
export interface FieldError {
  message: string;
  code?: string | undefined;
}

/** A field map of a 400 response: member name to its messages. */
export type FieldErrors = Record<string, FieldError[]>;

// Service messages are short fixed texts; the cap keeps a misbehaving proxy's page out of logs.
const MAX_SERVICE_TEXT = 200;
const MAX_FIELD_MESSAGES = 5;

function contextDetails(ctx: CallContext, status: number | null): Record<string, unknown> {
  const details: Record<string, unknown> = { endpoint: ctx.endpoint, method: ctx.method, status };
  if (ctx.requestId !== undefined) details.requestId = ctx.requestId;
  return details;
}

function shortText(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, MAX_SERVICE_TEXT) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The service's `{code, message}` (or OAuth `{error, error_description}`), when the body has one. */
export function serviceErrorOf(body: unknown): { code?: string; message?: string } {
  if (!isRecord(body)) return {};
  const code = shortText(body.code) ?? shortText(body.error);
  const message = shortText(body.message) ?? shortText(body.error_description);
  return { ...(code !== undefined && { code }), ...(message !== undefined && { message }) };
}

function fieldMapOf(value: unknown): FieldErrors | null {
  if (!isRecord(value)) return null;
  const map: FieldErrors = {};
  for (const [member, list] of Object.entries(value)) {
    if (!Array.isArray(list)) return null;
    setOwn(
      map,
      member,
      list.map((item) =>
        isRecord(item)
          ? { message: shortText(item.message) ?? 'invalid', code: shortText(item.code) }
          : { message: shortText(item) ?? 'invalid' },
      ),
    );
  }
  return map;
}

/** The field map(s) of a 400 body: one map, or one per element for an array body (locations). */
export function fieldErrorsOf(body: unknown): FieldErrors | FieldErrors[] | null {
  if (Array.isArray(body)) {
    const maps = body.map((element) => (isRecord(element) ? fieldMapOf(element) : null));
    return maps.every((map): map is FieldErrors => map !== null) ? maps : null;
  }
  return fieldMapOf(body);
}

/** `name: "x" is not a valid choice.; sample 3: lat: This field is required.` (capped). */
export function describeFieldErrors(fields: FieldErrors | FieldErrors[]): string {
  const lines: string[] = [];
  const add = (prefix: string, map: FieldErrors) => {
    for (const [member, list] of Object.entries(map)) {
      for (const item of list) lines.push(`${prefix}${member}: ${item.message}`);
    }
  };
  if (Array.isArray(fields)) fields.forEach((map, index) => add(`sample ${index}: `, map));
  else add('', fields);
  const shown = lines.slice(0, MAX_FIELD_MESSAGES).join('; ');
  const more = lines.length - MAX_FIELD_MESSAGES;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

/** Whether a 404/410 means "this id" or "this whole endpoint". */
export type NotFoundScope = 'item' | 'collection';

/**
 * The error for a non-2xx response that will not be retried (or whose retries ran out).
 * `scope: 'collection'` is for list endpoints: a 404/410 there means the endpoint itself is gone.
 */
export function errorFromStatus(options: {
  status: number;
  body: unknown;
  ctx: CallContext;
  scope: NotFoundScope;
  attempts?: number;
}): TransportError {
  const { status, body, ctx, scope } = options;
  const service = serviceErrorOf(body);
  const details = {
    ...contextDetails(ctx, status),
    ...(service.code !== undefined && { serviceCode: service.code }),
    ...(service.message !== undefined && { serviceMessage: service.message }),
    ...(options.attempts !== undefined && { attempts: options.attempts }),
  };
  const what = `${ctx.method} ${ctx.endpoint}`;
  const make = (code: ErrorCode, message: string, isRetryable: boolean, hint?: string) =>
    new TransportError({ code, message, isRetryable, details, ...(hint && { hint }) });

  if ((status === 404 || status === 410) && scope === 'collection') {
    return make(
      'api.endpoint_gone',
      `${what}: the service answered ${status} for the whole endpoint`,
      false,
      'The v1.0 polling endpoints may have been retired; request data then arrives by webhook only.',
    );
  }
  switch (status) {
    case 400: {
      const fields = fieldErrorsOf(body);
      const summary = fields ? describeFieldErrors(fields) : (service.message ?? 'invalid request');
      return new TransportError({
        code: 'api.invalid',
        message: `${what}: rejected as invalid: ${summary}`,
        isRetryable: false,
        details: { ...details, ...(fields && { fields }) },
      });
    }
    case 401:
      return make(
        'api.unauthorized',
        `${what}: not authenticated`,
        false,
        'The service rejected a freshly issued token; check that the credentials still have Open API access.',
      );
    case 403:
      return make(
        'api.not_available',
        `${what}: not available to this organization${ctx.requestId ? ` (request ${ctx.requestId})` : ''}`,
        false,
        'The request is already assigned, canceled, or was never broadcast to this organization.',
      );
    case 404:
      return make('api.not_found', `${what}: not found`, false);
    case 410:
      return make('api.gone', `${what}: gone`, false);
    case 429:
      return make(
        'api.rate_limited',
        `${what}: rate limited by the service`,
        true,
        'Lower rateLimitPerSec or concurrency, or poll less often.',
      );
    default:
      if (status >= 500) return make('api.server', `${what}: service error ${status}`, true);
      if (status >= 300 && status < 400) {
        const hint =
          'The service redirected an API call; check the scheme, host and path prefix of the base URLs.';
        return make('api.unexpected_status', `${what}: redirected (${status})`, false, hint);
      }
      return make('api.unexpected_status', `${what}: unexpected status ${status}`, false);
  }
}

/** A connection-level failure (refused, reset, DNS, TLS); TLS failures are not retryable. */
export function networkError(
  ctx: CallContext,
  cause: unknown,
  extra: Record<string, unknown>,
  isRetryable = true,
): TransportError {
  return new TransportError({
    code: 'api.network',
    message: `${ctx.method} ${ctx.endpoint}: network error${typeof extra.errno === 'string' ? ` (${extra.errno})` : ''}`,
    hint: isRetryable
      ? 'Check network access to the service and the configured base URLs.'
      : 'The TLS handshake failed: check the base URL and the service certificate (system CA store).',
    isRetryable,
    cause,
    details: { ...contextDetails(ctx, null), ...extra },
  });
}

/** The attempt ran out of time (connect, headers, body or the overall per-attempt limit). */
export function timeoutError(
  ctx: CallContext,
  cause: unknown,
  extra: Record<string, unknown>,
): TransportError {
  return new TransportError({
    code: 'api.timeout',
    message: `${ctx.method} ${ctx.endpoint}: timed out`,
    isRetryable: true,
    cause,
    details: { ...contextDetails(ctx, null), ...extra },
  });
}

/** A 2xx whose body is not JSON, is truncated, or has the wrong top-level shape. */
export function malformedResponse(
  ctx: CallContext,
  status: number,
  reason: string,
  extra: Record<string, unknown> = {},
): TransportError {
  return new TransportError({
    code: 'api.malformed_response',
    message: `${ctx.method} ${ctx.endpoint}: malformed response: ${reason}`,
    isRetryable: true,
    details: { ...contextDetails(ctx, status), ...extra },
  });
}

/** The token endpoint refused the client credentials. */
export function invalidClient(status: number, body: unknown): TransportError {
  const service = serviceErrorOf(body);
  return new TransportError({
    code: 'api.invalid_client',
    message: 'the token endpoint rejected the client credentials',
    hint: 'Check TRANSPORT_CLIENT_ID and TRANSPORT_CLIENT_SECRET; regenerate them in the organization settings (Open API) if they were revoked.',
    isRetryable: false,
    details: {
      endpoint: 'token',
      method: 'POST',
      status,
      ...(service.code !== undefined && { serviceCode: service.code }),
      ...(service.message !== undefined && { serviceMessage: service.message }),
    },
  });
}

/** No token could be obtained: the token endpoint failed after its retries, or answered oddly. */
export function tokenUnavailable(cause: unknown, isRetryable = true): TransportError {
  const inner = cause instanceof TransportError ? cause : undefined;
  return new TransportError({
    code: 'api.token_unavailable',
    message: `could not obtain an access token${inner ? `: ${inner.message}` : ''}`,
    hint: 'Check that the token endpoint (auth URL) is reachable and correct.',
    isRetryable,
    cause,
    details: {
      endpoint: 'token',
      method: 'POST',
      ...(inner && { causeCode: inner.code, ...inner.details }),
    },
  });
}

/** A caller passed an argument the service would reject; nothing was sent. */
export function invalidArgument(
  message: string,
  details: Record<string, unknown> = {},
): TransportError {
  return new TransportError({ code: 'api.invalid_argument', message, isRetryable: false, details });
}

/**
 * True when an action failed in a way that leaves open whether the service processed it (reset,
 * timeout after sending, 5xx): read the request back before sending the action again.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof TransportError && error.details.isOutcomeUnknown === true;
}
