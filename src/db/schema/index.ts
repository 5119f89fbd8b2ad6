/*
 * Every table of the mirror, described once (see columns.ts). The order is the order of
 * creation: a table comes after the tables it references.
 */
import {
  backfillWindows,
  intakeGaps,
  quarantine,
  schemaDrift,
  syncRuns,
  syncState,
} from './bookkeeping.js';
import type { Table } from './columns.js';
import { outboxActions, outboxLocations } from './outbox.js';
import { requestProfiles } from './profiles.js';
import {
  accounts,
  facilities,
  requestChanges,
  requestFields,
  requestLocations,
  requests,
} from './requests.js';
import { webhookEvents } from './webhooks.js';

export * from './bookkeeping.js';
export * from './columns.js';
export * from './outbox.js';
export * from './profiles.js';
export * from './requests.js';
export * from './webhooks.js';

/** Every table, parents before children. */
export const TABLES: readonly Table[] = [
  requests,
  requestLocations,
  accounts,
  facilities,
  requestFields,
  requestChanges,
  syncRuns,
  quarantine,
  schemaDrift,
  intakeGaps,
  syncState,
  webhookEvents,
  outboxLocations,
  outboxActions,
  backfillWindows,
  requestProfiles,
];
