import { isIP } from 'node:net';
import { Cron } from 'croner';
import * as z from 'zod';
import { DEFAULT_ENV_FILE } from './environment-file.js';

/**
 * Every setting in one table: its environment variable, default, description and the zod schema
 * that parses the variable's text. The loader, the CLI and docs/configuration.md's table all
 * read this table, so they cannot disagree.
 */
export interface Setting<T> {
  env: string;
  /** The text used when the variable is unset; undefined means required (where required). */
  defaultText?: string;
  description: string;
  /** Parses the variable's text (already trimmed). */
  schema: z.ZodType<T>;
  /** Never echoed in errors, logs or status output. */
  isSecret?: boolean;
  /** Needed only by commands that talk to the service. */
  isServiceSetting?: boolean;
}

const httpUrl = z.string().refine((text) => {
  try {
    const url = new URL(text);
    // No user:password: the daemon logs its URLs at start, and a secret must not reach the log.
    const hasCredentials = url.username !== '' || url.password !== '';
    const isHttp = url.protocol === 'https:' || url.protocol === 'http:';
    return isHttp && !url.search && !url.hash && !hasCredentials;
  } catch {
    return false;
  }
}, 'must be an http(s) URL without query, fragment or user:password, e.g. https://api.example.com/');

/** NATS server URLs: nats:// or tls://, comma-separated, credentials never in them (they are logged). */
const natsUrls = z
  .string()
  .transform((text) => text.split(',').map((part) => part.trim()))
  .refine(
    (urls) =>
      urls.every((text) => {
        try {
          const url = new URL(text);
          const hasCredentials = url.username !== '' || url.password !== '';
          const isNats = url.protocol === 'nats:' || url.protocol === 'tls:';
          return isNats && url.hostname !== '' && !url.search && !url.hash && !hasCredentials;
        } catch {
          return false;
        }
      }),
    'must be nats:// or tls:// URLs, comma-separated, without user:password (use TRANSPORT_FEED_NATS_CREDS_FILE), e.g. nats://127.0.0.1:4222',
  );

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const positiveNumber = (max: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, `must be a number from 0 to ${max}`)
    .transform(Number)
    .pipe(z.number().min(0).max(max, `must be at most ${max}`));

/** A postgres:// or postgresql:// URL names a PostgreSQL mirror; anything else is a file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

const databaseLocation = z
  .string()
  .min(1, 'must be a file path or a postgres:// URL')
  .superRefine((text, context) => {
    if (!isPostgresLocation(text)) return;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      context.addIssue({ code: 'custom', message: 'is not a valid postgres:// URL' });
      return;
    }
    if (url.password) {
      context.addIssue({
        code: 'custom',
        message:
          'must not carry a password: put it in TRANSPORT_DB_PASSWORD_FILE, the systemd credential db_password, or PGPASSFILE',
      });
    }
    if (url.pathname.length <= 1) {
      context.addIssue({
        code: 'custom',
        message: 'must name the database: postgres://user@host/database',
      });
    }
  });

/** Request states the mirror can poll; `awaiting` comes only from the full list. */
export const REQUEST_STATES = ['awaiting', 'accepted', 'completed', 'canceled'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

const stateList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(z.enum(REQUEST_STATES, { error: `states are ${REQUEST_STATES.join(', ')}` }))
      .min(1, `name at least one of ${REQUEST_STATES.join(', ')}`),
  )
  .transform((states) => [...new Set(states)]);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const onOff = z
  .string()
  .transform((text) => text.toLowerCase())
  .pipe(z.enum(['on', 'off', 'true', 'false', '1', '0'], { error: 'must be on or off' }))
  .transform((text) => text === 'on' || text === 'true' || text === '1');

/** An IPv4 or IPv6 CIDR, or a bare address (a /32 or /128). */
function isCidr(text: string): boolean {
  const [address = '', bits, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32);
}

/**
 * A pattern the daemon's scheduler (croner) accepts. Checked with the rest of the configuration,
 * so doctor and status refuse what run would.
 */
function checkCronPattern(pattern: string, context: z.RefinementCtx): void {
  try {
    new Cron(pattern, { paused: true }).stop();
  } catch (error) {
    context.addIssue({
      code: 'custom',
      message: `must be a cron pattern of five or six fields, seconds first when six, e.g. "0 * * * * *" (${(error as Error).message})`,
    });
  }
}

const cidrList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().refine(isCidr, 'must be comma-separated CIDRs, e.g. 203.0.113.0/24')));

const hourRange = z
  .string()
  .regex(/^\d{2}-\d{2}$/, 'must be HH-HH, e.g. 06-20')
  .transform((text) => text.split('-').map(Number) as [number, number])
  .refine(
    ([from, to]) => from <= 23 && to <= 24 && from < to,
    'must be HH-HH with from < to, within 00-24',
  );

function setting<T>(definition: Setting<T>): Setting<T> {
  return definition;
}

/** The settings table. Keys are the names used in code; `env` is the public interface. */
export const SETTINGS = {
  envFile: setting({
    env: 'TRANSPORT_ENV_FILE',
    defaultText: DEFAULT_ENV_FILE,
    description:
      "The environment file every command reads, the one the unit names in EnvironmentFile=, so that a command run by hand sees the daemon's settings. Read when it exists; empty (TRANSPORT_ENV_FILE=): none. A variable already in the environment wins over the file. Lines are KEY=value, KEY=\"value with spaces\", KEY='value with $' and # comments; a line that a shell and systemd would read differently is refused (exit 2).",
    schema: z.string(),
  }),
  authUrl: setting({
    env: 'TRANSPORT_AUTH_URL',
    description: 'Base URL of the token endpoint ({auth_url}).',
    schema: httpUrl,
    isServiceSetting: true,
  }),
  hubUrl: setting({
    env: 'TRANSPORT_HUB_URL',
    description: 'Base URL of the v2.0 request actions: accept, decline, state ({hub_url}).',
    schema: httpUrl,
    isServiceSetting: true,
  }),
  baseUrl: setting({
    env: 'TRANSPORT_BASE_URL',
    description: 'Base URL of the v1.0 reads and location updates ({base_url}).',
    schema: httpUrl,
    isServiceSetting: true,
  }),
  clientId: setting({
    env: 'TRANSPORT_CLIENT_ID',
    description: "OAuth client id generated in the service's Open API settings.",
    schema: z.string().min(1, 'must not be empty'),
    isServiceSetting: true,
  }),
  clientSecret: setting({
    env: 'TRANSPORT_CLIENT_SECRET',
    description:
      'OAuth client secret. Prefer TRANSPORT_CLIENT_SECRET_FILE or the systemd credential `client_secret` ($CREDENTIALS_DIRECTORY/client_secret), which keep it out of the environment.',
    schema: z.string().min(1, 'must not be empty'),
    isSecret: true,
    isServiceSetting: true,
  }),
  clientSecretFile: setting({
    env: 'TRANSPORT_CLIENT_SECRET_FILE',
    description: 'File holding the client secret (surrounding white space is ignored).',
    schema: z.string().min(1, 'must be a file path'),
  }),
  dbPath: setting({
    env: 'TRANSPORT_DB',
    defaultText: './data/transport-sync.db',
    description:
      'The mirror: a SQLite file path (created with mode 0600), or a PostgreSQL URL postgres://user@host:port/database (the password never goes here: TRANSPORT_DB_PASSWORD_FILE, the systemd credential `db_password`, or PGPASSFILE).',
    schema: databaseLocation,
  }),
  dbPasswordFile: setting({
    env: 'TRANSPORT_DB_PASSWORD_FILE',
    description:
      "File holding the PostgreSQL role's password (surrounding white space ignored). Without it, the systemd credential `db_password` ($CREDENTIALS_DIRECTORY/db_password) is used when present, else PostgreSQL's own PGPASSFILE (~/.pgpass).",
    schema: z.string().min(1, 'must be a file path'),
  }),
  windowPastHours: setting({
    env: 'TRANSPORT_WINDOW_PAST_HOURS',
    defaultText: '72',
    description:
      'The poll window starts this many hours before now. Three days catch late edits to finished trips (billing corrections, cancellations after the fact).',
    schema: wholeNumber(0, 24 * 366),
  }),
  windowFutureHours: setting({
    env: 'TRANSPORT_WINDOW_FUTURE_HOURS',
    defaultText: '336',
    description:
      'The poll window ends this many hours after now. Two weeks cover trips booked ahead, standing orders and round-trip return legs.',
    schema: wholeNumber(0, 24 * 366),
  }),
  states: setting({
    env: 'TRANSPORT_STATES',
    defaultText: REQUEST_STATES.join(','),
    description:
      'Comma-separated request states to mirror: awaiting (broadcasts not yet answered, read from the full list), accepted, completed, canceled.',
    schema: stateList,
  }),
  concurrency: setting({
    env: 'TRANSPORT_CONCURRENCY',
    defaultText: '4',
    description:
      'Most requests in flight to the service at once. A backfill imports half as many windows at once (at least one).',
    schema: wholeNumber(1, 64),
  }),
  rateLimitPerSec: setting({
    env: 'TRANSPORT_RATE_LIMIT_PER_SEC',
    defaultText: '0',
    description:
      'A hard cap on requests per second sent to the service (0 = none). Without one, calls are paced only when the service answers 429: the rate is halved and grown back slowly (see docs/sync.md).',
    schema: positiveNumber(1000),
  }),
  pollCron: setting({
    env: 'TRANSPORT_POLL_CRON',
    defaultText: '0 * * * * *',
    description:
      'When the daemon polls: a cron pattern, seconds field allowed (default: every minute at second 0). Cycles never overlap.',
    schema: z.string().min(1, 'must be a cron pattern').superRefine(checkCronPattern),
  }),
  pollMode: setting({
    env: 'TRANSPORT_POLL',
    defaultText: 'auto',
    description:
      'auto, on or off. auto polls while the v1.0 list endpoints answer and switches to webhooks alone when they answer 404 or 410 as a whole (the service retired v1.0 on 2026-08-12), probing again once a day; on polls whatever they answer; off runs on webhooks alone.',
    schema: z
      .string()
      .transform((text) => text.toLowerCase())
      .pipe(
        z.enum(['auto', 'on', 'off', 'true', 'false', '1', '0'], {
          error: 'must be auto, on or off',
        }),
      )
      .transform((text) =>
        text === 'auto' ? 'auto' : text === 'on' || text === 'true' || text === '1' ? 'on' : 'off',
      ),
  }),
  schemaPolicy: setting({
    env: 'TRANSPORT_SCHEMA_POLICY',
    defaultText: 'evolve',
    description:
      'A record with a member missing, retyped or unknown: evolve stores its valid members, NULL for the drifted ones, and records the drift in schema_drift; strict quarantines the whole record. A record without its id or state is quarantined under either.',
    schema: z
      .string()
      .transform((text) => text.toLowerCase())
      .pipe(z.enum(['evolve', 'strict'], { error: 'must be evolve or strict' })),
  }),
  httpTimeoutMs: setting({
    env: 'TRANSPORT_HTTP_TIMEOUT_MS',
    defaultText: '30000',
    description: 'Per-attempt timeout of a call to the service, in milliseconds.',
    schema: wholeNumber(100, 600_000),
  }),
  cycleDeadlineMs: setting({
    env: 'TRANSPORT_CYCLE_DEADLINE_MS',
    defaultText: '600000',
    description:
      'A poll cycle still running after this many milliseconds is aborted and retried at the next tick.',
    schema: wholeNumber(1000, 86_400_000),
  }),
  webhookListen: setting({
    env: 'TRANSPORT_WEBHOOK_LISTEN',
    description:
      "host:port (or just port) where `run` receives the service's webhooks; host defaults to 127.0.0.1. Unset: no receiver. It speaks HTTPS itself with TRANSPORT_WEBHOOK_TLS_CERT_FILE and _KEY_FILE, or sits behind a reverse proxy that does.",
    schema: z
      .string()
      .regex(
        /^(?:(?:\[[0-9a-fA-F:]+\]|[\w.-]+):)?\d{1,5}$/,
        'must be host:port or port, e.g. 127.0.0.1:8787',
      ),
  }),
  webhookPath: setting({
    env: 'TRANSPORT_WEBHOOK_PATH',
    defaultText: '/webhooks/',
    description: 'URL path of the webhook receiver.',
    schema: z.string().regex(/^\/\S*$/, 'must start with /'),
  }),
  webhookSignatureHeader: setting({
    env: 'TRANSPORT_WEBHOOK_SIGNATURE_HEADER',
    defaultText: 'X-VectorCare-Signature',
    description: 'Header carrying the base64 RSA-SHA256 signature of the raw body.',
    schema: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
  }),
  webhookPublicKeyFile: setting({
    env: 'TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE',
    description:
      "PEM public key that verifies webhook signatures (downloaded from the service's settings). Unset: the systemd credential `webhook_public_key` ($CREDENTIALS_DIRECTORY/webhook_public_key) when present.",
    schema: z.string().min(1, 'must be a file path'),
  }),
  isWebhookUnsignedAllowed: setting({
    env: 'TRANSPORT_WEBHOOK_ALLOW_UNSIGNED',
    defaultText: '0',
    description:
      'Set to 1 to accept unsigned webhooks when no public key is configured (tests and trials only; logged as a warning).',
    schema: onOff,
  }),
  webhookTlsCertFile: setting({
    env: 'TRANSPORT_WEBHOOK_TLS_CERT_FILE',
    description:
      'PEM certificate (chain) for the webhook receiver: with the key file, the receiver speaks HTTPS (TLS 1.2 or later) itself. Re-read on SIGHUP and when the file changes. Unset: the systemd credential `webhook_tls_cert` when present.',
    schema: z.string().min(1, 'must be a file path'),
  }),
  webhookTlsKeyFile: setting({
    env: 'TRANSPORT_WEBHOOK_TLS_KEY_FILE',
    description:
      'PEM private key of TRANSPORT_WEBHOOK_TLS_CERT_FILE. Unset: the systemd credential `webhook_tls_key` when present.',
    schema: z.string().min(1, 'must be a file path'),
  }),
  webhookAllowFrom: setting({
    env: 'TRANSPORT_WEBHOOK_ALLOW_FROM',
    description:
      'Comma-separated CIDRs (or addresses) the service delivers webhooks from, as it publishes them. Other sources are closed at accept or answered 403, and nothing they send is stored. Unset: any source (the signature still decides).',
    schema: cidrList,
  }),
  trustedProxies: setting({
    env: 'TRANSPORT_TRUSTED_PROXIES',
    description:
      'Comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the real source for TRANSPORT_WEBHOOK_ALLOW_FROM. Unset: nobody is believed.',
    schema: cidrList,
  }),
  webhookMaxConnectionsPerSource: setting({
    env: 'TRANSPORT_WEBHOOK_MAX_CONNECTIONS_PER_SOURCE',
    defaultText: '256',
    description:
      'Open connections one source address may hold at the webhook receiver; more are closed at accept, so one misbehaving peer cannot exhaust the descriptors. Keep it above the delivery concurrency of the service (a burst may arrive over 100 connections from one address) and well below LimitNOFILE.',
    schema: wholeNumber(1, 100_000),
  }),
  intakeGapAlarmSeconds: setting({
    env: 'TRANSPORT_INTAKE_GAP_ALARM_SECONDS',
    defaultText: '90',
    description:
      'A stretch longer than this in which the receiver could not accept or store webhooks may have lost events (the service retries for about 64 s, then drops them): it is alarmed in the log, status and metrics until `transport-sync gaps --ack`. Shorter gaps are recorded only.',
    schema: wholeNumber(1, 86_400),
  }),
  webhookSilenceMinutes: setting({
    env: 'TRANSPORT_WEBHOOK_SILENCE_MINUTES',
    description:
      'No webhook delivery for this many minutes within TRANSPORT_WEBHOOK_SILENCE_HOURS is silence: status exits 1 and /metrics shows transport_sync_webhook_silent (0: off). Unset: 180 while webhooks are the only intake, off while polling runs.',
    schema: wholeNumber(0, 10_080),
  }),
  webhookSilenceHours: setting({
    env: 'TRANSPORT_WEBHOOK_SILENCE_HOURS',
    defaultText: '00-24',
    description:
      'Local hours HH-HH in which deliveries are expected, for TRANSPORT_WEBHOOK_SILENCE_MINUTES (e.g. 06-20).',
    schema: hourRange,
  }),
  locationsApi: setting({
    env: 'TRANSPORT_LOCATIONS_API',
    defaultText: 'v2',
    description:
      'Where GPS samples go, for the locations command and the outbox alike: v2 sends to {hub_url}/openapi/v2.0/requests/{id}/locations/ (v1.0 was retired on 2026-08-12); v1 to {base_url}/openapi/v1.0/requests/{id}/locations/.',
    schema: z
      .string()
      .transform((text) => text.toLowerCase())
      .pipe(z.enum(['v2', 'v1'], { error: 'must be v2 or v1' })),
    isServiceSetting: true,
  }),
  webhookMaxBodyBytes: setting({
    env: 'TRANSPORT_WEBHOOK_MAX_BODY_BYTES',
    defaultText: '1048576',
    description: 'Largest webhook body accepted; larger ones get 413.',
    schema: wholeNumber(1024, 64 * 1024 * 1024),
  }),
  outboxIntervalMs: setting({
    env: 'TRANSPORT_OUTBOX_INTERVAL_MS',
    defaultText: '2000',
    description:
      'How often `run` looks for queued outbox rows (outbox_locations, outbox_actions) to send.',
    schema: wholeNumber(100, 3_600_000),
  }),
  httpListen: setting({
    env: 'TRANSPORT_HTTP_LISTEN',
    description:
      'host:port (or just port) for /healthz, /readyz and /metrics; host defaults to 127.0.0.1. Unset: no monitoring endpoint. May equal TRANSPORT_WEBHOOK_LISTEN to share one server.',
    schema: z
      .string()
      .regex(
        /^(?:(?:\[[0-9a-fA-F:]+\]|[\w.-]+):)?\d{1,5}$/,
        'must be host:port or port, e.g. 127.0.0.1:9464',
      ),
  }),
  staleAfterCycles: setting({
    env: 'TRANSPORT_STALE_AFTER_CYCLES',
    defaultText: '3',
    description:
      'The mirror counts as stale (status exits 1, /readyz answers 503) once this many scheduled cycles have passed since the last successful one (this many poll intervals on a regular schedule; a schedule that pauses overnight is not stale overnight).',
    schema: wholeNumber(1, 1000),
  }),
  retentionDays: setting({
    env: 'TRANSPORT_RETENTION_DAYS',
    defaultText: '180',
    description:
      'sync_runs, webhook_events and request_changes rows older than this many days are pruned (0 keeps everything); a change a configured feed sink has not acknowledged is kept until it has.',
    schema: wholeNumber(0, 36_500),
  }),
  feedWebhookUrl: setting({
    env: 'TRANSPORT_FEED_WEBHOOK_URL',
    description:
      'Where the daemon (the leader) POSTs every change of the mirror, in commit order, signed per the Standard Webhooks specification (docs/feed.md). Unset: no outbound webhook.',
    schema: httpUrl,
  }),
  feedWebhookSecretFile: setting({
    env: 'TRANSPORT_FEED_WEBHOOK_SECRET_FILE',
    description:
      "File holding the outbound webhook's signing secret: whsec_ and the base64 of a 24 to 64 byte key. Unset: the systemd credential `feed_webhook_secret` when present.",
    schema: z.string().min(1, 'must be a file path'),
  }),
  feedWebhookCaFile: setting({
    env: 'TRANSPORT_FEED_WEBHOOK_CA_FILE',
    description:
      "PEM certificate(s) of a private CA that the outbound webhook's HTTPS certificate is verified against. Unset: the system's trusted CAs.",
    schema: z.string().min(1, 'must be a file path'),
  }),
  isFeedWebhookPhiIncluded: setting({
    env: 'TRANSPORT_FEED_WEBHOOK_INCLUDE_PHI',
    defaultText: '0',
    description:
      "Set to 1 to send patients' and requesters' names, dates of birth and e-mail addresses in the outbound webhook's documents; 0 leaves them out.",
    schema: onOff,
  }),
  feedPgChannel: setting({
    env: 'TRANSPORT_FEED_PG_CHANNEL',
    defaultText: 'transport_sync_changes',
    description:
      'When the mirror is on PostgreSQL, the daemon (the leader) sends NOTIFY on this channel for every change, in commit order, the payload its position, request id and kind as JSON (docs/feed.md); none: no notifications.',
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier, or none'),
  }),
  feedNatsUrl: setting({
    env: 'TRANSPORT_FEED_NATS_URL',
    description:
      'NATS server(s) the daemon (the leader) publishes every change of the mirror to, through JetStream, in commit order with Nats-Msg-Id = its position (docs/feed.md): nats:// or tls:// URLs, comma-separated, without user:password. Unset: no NATS sink.',
    schema: natsUrls,
  }),
  feedNatsSubject: setting({
    env: 'TRANSPORT_FEED_NATS_SUBJECT',
    defaultText: 'transport.requests.changes',
    description:
      'The subject the NATS sink publishes on. A JetStream stream must capture it; when none does, the daemon creates one (docs/feed.md).',
    schema: z
      .string()
      .regex(
        /^[^\s.*>]+(?:\.[^\s.*>]+)*$/,
        'must be a NATS subject without wildcards, e.g. transport.requests.changes',
      ),
  }),
  feedNatsCredsFile: setting({
    env: 'TRANSPORT_FEED_NATS_CREDS_FILE',
    description:
      'NATS credentials file (a user JWT and its NKey seed) the NATS sink authenticates with. Unset: the systemd credential `feed_nats_creds` when present, else no authentication.',
    schema: z.string().min(1, 'must be a file path'),
  }),
  feedNatsCaFile: setting({
    env: 'TRANSPORT_FEED_NATS_CA_FILE',
    description:
      "PEM certificate(s) of a private CA that the NATS server's TLS certificate is verified against; setting it requires TLS. Unset: the system's trusted CAs (TLS when the URL is tls:// or the server requires it).",
    schema: z.string().min(1, 'must be a file path'),
  }),
  isFeedNatsPhiIncluded: setting({
    env: 'TRANSPORT_FEED_NATS_INCLUDE_PHI',
    defaultText: '0',
    description:
      "Set to 1 to send patients' and requesters' names, dates of birth and e-mail addresses in the documents published to NATS; 0 leaves them out.",
    schema: onOff,
  }),
  logLevel: setting({
    env: 'LOG_LEVEL',
    defaultText: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}. Patient data never appears at info or above.`,
    schema: z
      .string()
      .transform((text) => text.toLowerCase())
      .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;
