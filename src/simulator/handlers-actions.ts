/**
 * The provider's actions: accept, decline, state update, locations, change request, best time.
 * Validation comes first (400), then availability (404 unknown id, 403 not available), so a bad
 * body is reported the same way whatever the request's state.
 */
import type { Handler, HandlerContext } from './context.js';
import {
  FIELD,
  json,
  NOT_FOUND,
  PERMISSION_DENIED,
  type ActionKind,
  type SimResponse,
} from './http.js';
import type { JsonValue } from './model.js';
import { STATE_UPDATE_NAMES, type ProviderOutcome } from './provider.js';
import { validateLocations } from './locations.js';
import {
  asObject,
  checkOptionalText,
  compact,
  fieldErrors,
  parseJson,
  requiredTimestamp,
} from './validation.js';

const NOTES_MAX = 450;
const FUTURE_SKEW_MS = 60_000;
const STATE_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

type Parsed<T> = { ok: true; value: T } | { ok: false; response: SimResponse };

function objectBody(raw: string): Parsed<Record<string, unknown>> {
  const parsed = parseJson(raw);
  return parsed.ok ? asObject(parsed.value) : parsed;
}

/** Turns an outcome into the response, recording the action when it succeeded. */
function finish(
  ctx: HandlerContext,
  kind: ActionKind,
  id: string,
  outcome: ProviderOutcome,
  body: unknown,
  success: SimResponse,
): SimResponse {
  if (!outcome.ok) return outcome.status === 404 ? NOT_FOUND : PERMISSION_DENIED;
  ctx.recordAction(kind, id, body as JsonValue);
  return success;
}

/** `PUT /openapi/v2.0/requests/{id}/accept/` → 201 echoing response_notes. */
export const handleAccept: Handler = (ctx, req) => {
  const body = objectBody(req.body);
  if (!body.ok) return body.response;
  const notes = body.value.response_notes;
  const errors = compact({ response_notes: checkOptionalText(notes, NOTES_MAX) });
  if (errors) return fieldErrors(errors);
  const text = typeof notes === 'string' ? notes : null;
  const outcome = ctx.provider.accept(req.id, text);
  return finish(ctx, 'accept', req.id, outcome, body.value, json(201, { response_notes: text }));
};

/** `PUT /openapi/v2.0/requests/{id}/decline/` → 201 `{}`. */
export const handleDecline: Handler = (ctx, req) => {
  const body = objectBody(req.body);
  if (!body.ok) return body.response;
  const notes = body.value.response_notes;
  const errors = compact({ response_notes: checkOptionalText(notes, NOTES_MAX) });
  if (errors) return fieldErrors(errors);
  const outcome = ctx.provider.decline(req.id, typeof notes === 'string' ? notes : null);
  return finish(ctx, 'decline', req.id, outcome, body.value, json(201, {}));
};

/** `POST /openapi/v2.0/requests/{id}/state/` → 201 echoing name and timestamp. */
export const handleState: Handler = (ctx, req) => {
  const body = objectBody(req.body);
  if (!body.ok) return body.response;
  const { name, timestamp } = body.value;
  const nameErrors =
    name === undefined || name === null || name === ''
      ? [FIELD.required]
      : typeof name === 'string' && (STATE_UPDATE_NAMES as readonly string[]).includes(name)
        ? []
        : [FIELD.choice(String(name))];
  const parsed = requiredTimestamp(timestamp);
  let timestampErrors = 'errors' in parsed ? parsed.errors : [];
  if ('ms' in parsed) {
    const nowMs = ctx.world.now();
    if (parsed.ms > nowMs + FUTURE_SKEW_MS) {
      timestampErrors = [{ message: 'Timestamp cannot be in the future.', code: 'common:invalid' }];
    } else if (parsed.ms < nowMs - STATE_MAX_AGE_MS) {
      timestampErrors = [{ message: 'Timestamp is older than 7 days.', code: 'common:invalid' }];
    }
  }
  const errors = compact({ name: nameErrors, timestamp: timestampErrors });
  if (errors) return fieldErrors(errors);
  const outcome = ctx.provider.reportState(req.id, name as string);
  return finish(ctx, 'state', req.id, outcome, body.value, json(201, { name, timestamp }));
};

/** `POST /openapi/v1.0/requests/{id}/locations/` → 200 `{}`; 400 lists errors per sample. */
export const handleLocations: Handler = (ctx, req) => {
  const parsed = parseJson(req.body);
  if (!parsed.ok) return parsed.response;
  const invalid = validateLocations(parsed.value);
  if (invalid) return invalid;
  const outcome = ctx.provider.postLocations(req.id);
  return finish(ctx, 'locations', req.id, outcome, parsed.value, json(200, {}));
};

/** `POST /openapi/v2.0/requests/{id}/change-request/` → 200 `{}`. */
export const handleChangeRequest: Handler = (ctx, req) => {
  const body = objectBody(req.body);
  if (!body.ok) return body.response;
  const agreed = requiredTimestamp(body.value.agreed_dt);
  const errors = compact({
    agreed_dt: 'errors' in agreed ? agreed.errors : [],
    change_reason: checkOptionalText(body.value.change_reason, NOTES_MAX),
  });
  if (errors || !('ms' in agreed)) return fieldErrors(errors ?? {});
  const outcome = ctx.provider.requestChange(req.id, agreed.ms);
  return finish(ctx, 'change_request', req.id, outcome, body.value, json(200, {}));
};

/** `PUT /openapi/v2.0/requests/{id}/best-time/` → 201 `{}`. */
export const handleBestTime: Handler = (ctx, req) => {
  const body = objectBody(req.body);
  if (!body.ok) return body.response;
  const proposed = requiredTimestamp(body.value.proposed_agreed_dt);
  if ('errors' in proposed) return fieldErrors({ proposed_agreed_dt: proposed.errors });
  const outcome = ctx.provider.proposeBestTime(req.id, proposed.ms);
  return finish(ctx, 'best_time', req.id, outcome, body.value, json(201, {}));
};
