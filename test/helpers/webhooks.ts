/**
 * Shared by the webhook tests: a signing key pair, signed deliveries over loopback, a complete
 * v2.0 data object, and a fixture with the webhook service on a real database of the project's
 * engine (a SQLite file, or a PostgreSQL database) beside the simulator and the real client.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../../src/log.js';
import type { WebhookConfig } from '../../src/webhooks/index.js';
import { queryOne } from './engine.js';
import { startMirror, type MirrorFixture } from './mirror.js';
import { tempDir } from './records.js';
import { startWebhookService, type WebhookService } from './webhook-service.js';
import type { SimulatorOptions } from '../../src/simulator/index.js';

let pair: { privateKey: KeyObject; publicKeyPem: string } | undefined;

/** One RSA key pair per test file: generating one takes a noticeable moment. */
export function keyPair(): { privateKey: KeyObject; publicKeyPem: string } {
  if (!pair) {
    const generated = generateKeyPairSync('rsa', { modulusLength: 2048 });
    pair = {
      privateKey: generated.privateKey,
      publicKeyPem: generated.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  }
  return pair;
}

/** base64 RSA-SHA256 of `body` with the test key. */
export function signBody(body: string | Buffer, key = keyPair().privateKey): string {
  return sign('sha256', Buffer.from(body), key).toString('base64');
}

/** The answer to one delivery, with the time it took. */
/**
 * Posts a signed delivery from another loopback source address (Linux routes all of 127/8 to
 * lo), over a connection of its own: fetch's agents cannot choose the source address.
 */
export function deliverFrom(
  url: string,
  payload: unknown,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'x-vectorcare-signature': signBody(body),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface Delivered {
  status: number;
  body: unknown;
  ms: number;
}

/** POSTs `payload` (objects as JSON); signed unless `signature` is given (null: no header). */
export async function deliver(
  url: string,
  payload: unknown,
  { signature, headers = {} }: { signature?: string | null; headers?: Record<string, string> } = {},
): Promise<Delivered> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const sig = signature === undefined ? signBody(body) : signature;
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(sig === null ? {} : { 'X-VectorCare-Signature': sig }),
      ...headers,
    },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed, ms };
}

/** A complete v2.0 data object (every documented member), with overrides. */
export function webhookData(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const location = (city: string, street: string) => ({
    address: `${street}, ${city}, OH 43215, USA`,
    city,
    country: 'US',
    name: null,
    state: 'OH',
    street,
    zip: '43215',
    lat: 39.96,
    lng: -82.99,
  });
  const members: Record<string, unknown> = {
    service_request_id: 'XX-ABCD1234',
    request_current_state: 'accepted',
    change_request_enabled: true,
    service_type: 'Ambulance',
    service_level_type: 'BLS',
    scheduling_option: 'specific',
    scheduling_type: 'one_way',
    organization_id: 'ORG1',
    account_name: "St. Brigid's Regional Medical Center",
    facility_name: 'North Campus',
    collection_id: 'COL1',
    service_request_web_url: 'https://app.example.invalid/requests/XX-ABCD1234/',
    agreed_for_time: '2026-11-22T14:30:00Z',
    pickup_date_time: '2026-11-22T14:00:00.000Z',
    appointment_datetime: '2026-11-22T15:30:00+00:00',
    return_date_time: null,
    revised_eta: null,
    pickup_location: location('Columbus', '100 N High St'),
    pickup_facility_name: 'North Campus',
    pickup_facility_type: 'Hospital',
    pickup_is_home: false,
    pickup_exact_location: 'ER bay 2',
    pickup_room_number: '412B',
    pickup_stair_steps: '0',
    pickup_phone_number: '614-555-0101',
    pickup_phone_number_extension: null,
    destination_location: location('Dublin', '7 Elm Ct'),
    destination_facility_name: null,
    destination_facility_type: null,
    destination_is_home: true,
    destination_exact_location: null,
    destination_address_detail: 'Apt 3',
    destination_room_number: null,
    destination_stair_steps: '3',
    destination_phone_number: null,
    destination_phone_number_extension: null,
    departure_airport: null,
    arrival_airport: null,
    patient_id: 'MRN-1',
    patient_first_name: 'Seán',
    patient_middle_name: null,
    patient_last_name: "O'Brien",
    patient_date_of_birth: '1948-02-29',
    patient_age: 78,
    patient_gender: 'male',
    patient_weight_lbs: 180.5,
    patient_weight_kg: 81.9,
    patient_height_inches: 70,
    patient_girth_inches: null,
    patient_bmi: '25.9',
    patient_over_300p: false,
    patient_language_spoken: 'English',
    patient_language_written: null,
    patient_interpreter_required: null,
    patient_membership_primary_id: 'A123',
    patient_membership_secondary_id: null,
    patient_membership_primary_prefix: 'MCR',
    patient_membership_secondary_prefix: null,
    patient_active_membership: true,
    patient_coverages: [{ payer: 'Medicare', member_id: 'A123' }],
    diagnosis_notes: 'CHF exacerbation',
    can_ambulate: false,
    patient_is_ready: true,
    is_inpatient: true,
    is_dialysis_trip: false,
    is_recent_onset: null,
    hospice: false,
    o2: '2 L/min',
    intravenous_therapy: null,
    number_of_drips: null,
    medications: [{ name: 'Heparin', dose: '1000 u/hr' }],
    cct_criteria: null,
    medical_supervision: null,
    mental_health_hold: null,
    isolation_precaution: false,
    under_isolation: [],
    has_own_wheelchair: null,
    required_equipment: ['Stretcher'],
    special_equipment: null,
    requester_first_name: 'Dana',
    requester_last_name: 'Reyes',
    requester_email: 'dana@hospital.example',
    requester_phone_number: null,
    requester_phone_number_extension: null,
    responder_user_first_name: 'Open',
    responder_user_last_name: 'API',
    responder_user_email: 'openapi@provider.example',
    contact_name: null,
    contact_phone: null,
    additional_passenger_name: null,
    additional_passenger_phone: null,
    additional_passenger_relationship: null,
    additional_passenger_weight: null,
    additional_personnel: null,
    authorizing_physician: 'Dr. Ng',
    receiving_practitioner: null,
    receiving_practitioner_2: null,
    transporting_practitioner: null,
    trip_priority_level: 'Routine',
    escalated: false,
    note: 'Call daughter (Zoë) on arrival; gate code #4471',
    transport_reason: ['Discharge'],
    other_requirements: null,
    payment_option_primary: 'Medicare',
    payment_option_primary_group_number: null,
    payment_option_primary_subscriber_id: 'S1',
    payment_plan_primary: 'Part B',
    payment_option_secondary: null,
    payment_option_secondary_group_number: null,
    payment_option_secondary_subscriber_id: null,
    payment_plan_secondary: null,
    pre_authorization_number: 'PA-1',
    external_authorization: null,
    travel_authorization_number: null,
    gl_code: '4100',
    case_number: null,
    is_round_trip_first_trip: false,
    is_round_trip_return_trip: false,
    round_trip_other_service_request_id: null,
    wait_and_return: null,
    return_on_will_call: null,
    override_approver: null,
    override_reason: null,
    dry_run_reason: null,
  };
  return { ...members, ...overrides };
}

/** A v2.0 envelope; `data` defaults to a complete data object of the same request. */
export function v2Event(
  eventId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const requestId = (overrides.service_request_id as string | undefined) ?? 'XX-ABCD1234';
  return {
    event_id: eventId,
    event_timestamp: '2026-11-21T10:00:00.000Z',
    service_request_id: requestId,
    request_status: 'ASSIGNED',
    action: 'BROADCAST_ACCEPTED',
    data: webhookData({ service_request_id: requestId }),
    ...overrides,
  };
}

/** The simulator, a real database, the real client, and the webhook service on loopback. */
export interface WebhookFixture extends MirrorFixture {
  service: WebhookService;
  keyFile: string;
  config: WebhookConfig;
  /** Starts another service on the same database (after `service.stop()`: a restart). */
  restart(options?: { pollingIsOn?: boolean }): Promise<WebhookService>;
  post(payload: unknown, options?: Parameters<typeof deliver>[2]): Promise<Delivered>;
  /** The `n` of a `SELECT count(*) AS n ...` on the mirror (`@name` parameters). */
  count(sql: string, params?: object): Promise<number>;
}

/** Starts the fixture; the simulator sends its webhooks here when `webhooks` is set. */
export async function startWebhookFixture(
  options: SimulatorOptions & {
    config?: Partial<WebhookConfig>;
    pollingIsOn?: boolean;
    log?: Logger;
    onOutcome?: (outcome: string) => void;
  } = {},
): Promise<WebhookFixture> {
  const {
    config: overrides,
    pollingIsOn = false,
    log = silentLogger(),
    onOutcome,
    ...simOptions
  } = options;
  const mirror = await startMirror(simOptions);
  const keyFile = join(tempDir(), 'webhook-public.pem');
  writeFileSync(keyFile, mirror.sim.webhooks?.publicKeyPem ?? keyPair().publicKeyPem);
  const config: WebhookConfig = {
    webhookListen: '127.0.0.1:0',
    webhookPath: '/webhooks/',
    webhookSignatureHeader: 'X-VectorCare-Signature',
    webhookPublicKeyFile: keyFile,
    isWebhookUnsignedAllowed: false,
    webhookMaxBodyBytes: 1_048_576,
    concurrency: 4,
    ...overrides,
  };
  const start = (isOn = pollingIsOn) =>
    startWebhookService({
      config,
      store: mirror.store,
      client: mirror.client,
      log,
      clock: mirror.clock,
      pollingIsOn: isOn,
      ...(onOutcome && { onOutcome }),
    });
  const fixture: WebhookFixture = {
    ...mirror,
    service: await start(),
    keyFile,
    config,
    async restart(restartOptions = {}) {
      fixture.service = await start(restartOptions.pollingIsOn);
      return fixture.service;
    },
    post: (payload, postOptions) => deliver(fixture.service.url, payload, postOptions),
    count: async (sql, params) => (await queryOne<{ n: number }>(mirror.db, sql, params))!.n,
    async close() {
      mirror.sim.webhooks?.close();
      await fixture.service.stop();
      await mirror.close();
    },
  };
  if (mirror.sim.webhooks) mirror.sim.webhooks.url = fixture.service.url;
  return fixture;
}

/**
 * A row with its JSON columns (`*_json`) parsed: PostgreSQL keeps them as jsonb and reprints
 * them (key order, spaces), so they are compared as values, never as text.
 */
export function parseJsonColumns<T extends Record<string, unknown> | undefined>(row: T): T {
  if (!row) return row;
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [
      key,
      key.endsWith('_json') && typeof value === 'string' ? (JSON.parse(value) as unknown) : value,
    ]),
  ) as T;
}

/** Percentile (0-100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0;
}
