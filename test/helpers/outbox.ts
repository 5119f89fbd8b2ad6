import type { Connection } from '../../src/db/sql.js';
import type { ActionRecord, Simulator } from '../../src/simulator/index.js';

/** A location row as another program would insert it; any member may be missing or wrong. */
export interface LocationInsert {
  lat?: unknown;
  lng?: unknown;
  alt?: unknown;
  speed?: unknown;
  timestamp?: unknown;
}

/** An action row as another program would insert it. */
export interface ActionInsert {
  kind: string;
  notes?: string | null;
  state_name?: string | null;
  at?: string | null;
  reason?: string | null;
}

/** Queues samples with plain SQL, as the README tells other programs to (one transaction). */
export async function queueLocations(
  db: Connection,
  requestId: string,
  samples: readonly LocationInsert[],
): Promise<void> {
  await db.transaction(async (sql) => {
    for (const sample of samples) {
      await sql.run(
        `INSERT INTO outbox_locations (request_id, lat, lng, alt, speed, timestamp)
         VALUES (@request_id, @lat, @lng, @alt, @speed, @timestamp)`,
        {
          request_id: requestId,
          lat: sample.lat ?? null,
          lng: sample.lng ?? null,
          alt: sample.alt ?? null,
          speed: sample.speed ?? null,
          timestamp: sample.timestamp ?? null,
        },
      );
    }
  });
}

/** Queues one action with plain SQL and returns its outbox_id. */
export async function queueAction(
  db: Connection,
  requestId: string,
  action: ActionInsert,
): Promise<number> {
  const row = await db.transaction((sql) =>
    sql.get<{ outbox_id: number }>(
      `INSERT INTO outbox_actions (request_id, kind, notes, state_name, at, reason)
       VALUES (@request_id, @kind, @notes, @state_name, @at, @reason)
       RETURNING outbox_id`,
      {
        request_id: requestId,
        kind: action.kind,
        notes: action.notes ?? null,
        state_name: action.state_name ?? null,
        at: action.at ?? null,
        reason: action.reason ?? null,
      },
    ),
  );
  return Number(row!.outbox_id);
}

/** A stored outbox row's delivery columns. */
export interface DeliveryRow {
  outbox_id: number;
  request_id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  sent_at: string | null;
}

/** Every row of an outbox table, in outbox_id order. */
export function outboxRows<T extends object = Record<string, unknown>>(
  db: Connection,
  table: 'outbox_locations' | 'outbox_actions',
): Promise<(DeliveryRow & T)[]> {
  return db.read((sql) => sql.all<DeliveryRow & T>(`SELECT * FROM ${table} ORDER BY outbox_id`));
}

/** `count` samples one second apart from `startSec`, each with a distinct timestamp. */
export function samplesFrom(startSec: number, count: number): LocationInsert[] {
  return Array.from({ length: count }, (_, i) => ({
    lat: 41.8 + i / 10_000,
    lng: -87.6 - i / 10_000,
    alt: 180 + (i % 7),
    speed: i % 3 === 0 ? null : 10 + (i % 5),
    timestamp: startSec + i,
  }));
}

/** The timestamps of every sample the simulator accepted for `requestId`, in arrival order. */
export function deliveredTimestamps(actions: readonly ActionRecord[], requestId: string): number[] {
  return actions
    .filter((action) => action.kind === 'locations' && action.requestId === requestId)
    .flatMap((action) => (action.body as { timestamp: number }[]).map((s) => s.timestamp));
}

/** How often each value occurs. */
export function tally<T>(values: readonly T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

/** The provider actions of one kind the simulator accepted, per request id. */
export function actionsOf(sim: Simulator, kind: ActionRecord['kind']): Map<string, number> {
  return tally(sim.actions.filter((a) => a.kind === kind).map((a) => a.requestId));
}
