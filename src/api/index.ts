/** The service client: endpoints, token, retries, limits, schemas and errors. */
export { createServiceClient } from './client.js';
export type { DetailPage, ServiceClient, ServiceClientOptions, WindowQuery } from './client.js';
export { MAX_NOTES_LENGTH, MAX_SAMPLES_PER_BATCH } from './actions.js';
export type { ServiceActions, TimeInput } from './actions.js';
export type { CallEvent, HttpTimeouts, RetryEvent, RetryMode } from './http.js';
export { DEFAULT_TIMEOUTS } from './http.js';
export { DEFAULT_RETRY_POLICY, parseRetryAfter } from './retry.js';
export type { RetryPolicy } from './retry.js';
export type { ParsedRecord, ParsedRecords, RejectedRecord } from './records.js';
export { parseRecord, parseRecords } from './records.js';
export type { CallContext, FieldError, FieldErrors } from './errors.js';
export { isOutcomeUnknown } from './errors.js';
export { joinUrl, paths, withQuery } from './urls.js';
export * from './schemas.js';
export * from './webhook-schemas.js';
