import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TransportError } from '../errors.js';
import { SETTINGS, type RequestState, type Setting } from './settings.js';

/** The parsed configuration. Service fields are present when the command needs the service. */
export interface Config {
  authUrl: string;
  hubUrl: string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** TRANSPORT_DB: a SQLite file path or a postgres:// URL (without a password). */
  dbPath: string;
  /** Where the PostgreSQL password is read from at connect time, when anywhere. */
  dbPasswordFile?: string;
  windowPastHours: number;
  windowFutureHours: number;
  states: RequestState[];
  concurrency: number;
  rateLimitPerSec: number;
  pollCron: string;
  /** TRANSPORT_POLL: auto (poll while v1.0 answers), on or off. */
  pollMode: 'auto' | 'on' | 'off';
  /** pollMode is not off. */
  isPollingOn: boolean;
  schemaPolicy: 'evolve' | 'strict';
  httpTimeoutMs: number;
  cycleDeadlineMs: number;
  logLevel: string;
  /** Unset: no webhook receiver. */
  webhookListen?: string;
  webhookPath: string;
  webhookSignatureHeader: string;
  webhookPublicKeyFile?: string;
  isWebhookUnsignedAllowed: boolean;
  webhookMaxBodyBytes: number;
  webhookTlsCertFile?: string;
  webhookTlsKeyFile?: string;
  /** Unset: deliveries from any source. */
  webhookAllowFrom?: string[];
  trustedProxies?: string[];
  webhookMaxConnectionsPerSource: number;
  intakeGapAlarmSeconds: number;
  /** Unset: 180 on webhooks alone, 0 (off) while polling runs (see ops/intake-settings.ts). */
  webhookSilenceMinutes?: number;
  /** Local hours [from, to) in which deliveries are expected. */
  webhookSilenceHours: [number, number];
  locationsApi: 'v2' | 'v1';
  outboxIntervalMs: number;
  /** Unset: no monitoring endpoint. */
  httpListen?: string;
  staleAfterCycles: number;
  retentionDays: number;
  /** Unset: no outbound webhook of the change feed. */
  feedWebhookUrl?: string;
  feedWebhookSecretFile?: string;
  feedWebhookCaFile?: string;
  isFeedWebhookPhiIncluded: boolean;
  /** NOTIFY channel of the change feed on PostgreSQL; 'none': no notifications. */
  feedPgChannel: string;
  /** Unset: no NATS sink of the change feed. */
  feedNatsUrl?: string[];
  feedNatsSubject: string;
  feedNatsCredsFile?: string;
  feedNatsCaFile?: string;
  isFeedNatsPhiIncluded: boolean;
}

/** Values given on the command line; an unset flag never overwrites the environment. */
export type ConfigOverrides = Partial<Record<keyof Config, string>>;

/**
 * Settings naming a file that a systemd credential (LoadCredential=NAME:...) stands in for when
 * the setting is unset: the credential's name. The client secret's is resolved on its own (it may
 * also be a value). The receiver, its preflight and doctor read the paths resolved here.
 */
export const CREDENTIAL_FILES = {
  dbPasswordFile: 'db_password',
  webhookPublicKeyFile: 'webhook_public_key',
  webhookTlsCertFile: 'webhook_tls_cert',
  webhookTlsKeyFile: 'webhook_tls_key',
  feedWebhookSecretFile: 'feed_webhook_secret',
  feedNatsCredsFile: 'feed_nats_creds',
} as const satisfies Partial<Record<keyof Config, string>>;

interface LoadOptions {
  env: NodeJS.ProcessEnv;
  /** Commands that call the service need its URLs and credentials; `migrate` and `status` do not. */
  needsService: boolean;
  overrides?: ConfigOverrides;
}

/**
 * Reads every setting from flags, then the environment, then its default, and validates them all.
 * Throws one `config.invalid` error whose message names each bad variable and what is wrong;
 * a secret's value is never part of it.
 */
export function loadConfig({ env, needsService, overrides = {} }: LoadOptions): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};

  for (const [key, definition] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    // The secret and its file are resolved below: one value from one of three sources. The
    // environment file was read before (src/config/environment-file.ts).
    if (key === 'clientSecret' || key === 'clientSecretFile' || key === 'envFile') continue;
    if (definition.isServiceSetting && !needsService) continue;
    const text = (overrides[key as keyof Config] ?? env[definition.env])?.trim();
    const source = text === undefined || text === '' ? definition.defaultText : text;
    if (source === undefined) {
      if (definition.isServiceSetting) problems.push(`${definition.env} is required`);
      continue;
    }
    const parsed = definition.schema.safeParse(source);
    if (parsed.success) values[key] = parsed.data;
    else problems.push(describeProblem(definition, source, parsed.error.issues[0]?.message));
  }

  // Each file setting left unset: the systemd credential of its name, when there is one.
  for (const [key, name] of Object.entries(CREDENTIAL_FILES)) {
    const credential = env.CREDENTIALS_DIRECTORY
      ? join(env.CREDENTIALS_DIRECTORY, name)
      : undefined;
    if (!values[key] && credential && existsSync(credential)) values[key] = credential;
  }

  if (needsService) {
    const secret = resolveSecret(env, problems);
    if (secret !== undefined) values.clientSecret = secret;
  }

  if (Boolean(values.webhookTlsCertFile) !== Boolean(values.webhookTlsKeyFile)) {
    problems.push(
      `${SETTINGS.webhookTlsCertFile.env} and ${SETTINGS.webhookTlsKeyFile.env} go together: set both or neither`,
    );
  }
  values.isPollingOn = values.pollMode !== 'off';

  if (problems.length > 0) {
    throw new TransportError({
      code: 'config.invalid',
      message: `invalid configuration: ${problems.join('; ')}`,
      hint: 'Set them in the environment file (/etc/transport-sync/transport-sync.env, or the file TRANSPORT_ENV_FILE names) or the environment; `transport-sync help config` lists them all.',
    });
  }
  return values as unknown as Config;
}

function describeProblem(definition: Setting<unknown>, text: string, issue: string | undefined) {
  // A URL's password is masked, or all of its user part when it has no password (a NATS token):
  // a misplaced secret must not reach a log through this message.
  const masked = text
    .replace(/(:\/\/[^:/@,]*):[^@/,]*@/g, '$1:***@')
    .replace(/(:\/\/)[^:/@,]+@/g, '$1***@');
  const shown = definition.isSecret ? '' : ` (got "${masked.slice(0, 80)}")`;
  return `${definition.env} ${issue ?? 'is invalid'}${shown}`;
}

/**
 * The client secret comes from exactly one place: TRANSPORT_CLIENT_SECRET,
 * TRANSPORT_CLIENT_SECRET_FILE, or the systemd credential `client_secret` (LoadCredential=).
 */
function resolveSecret(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const direct = env[SETTINGS.clientSecret.env];
  const file = env[SETTINGS.clientSecretFile.env]?.trim();
  if (direct && file) {
    problems.push(
      `${SETTINGS.clientSecret.env} and ${SETTINGS.clientSecretFile.env} are both set; set only one`,
    );
    return undefined;
  }
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  const credentialFile = env.CREDENTIALS_DIRECTORY
    ? join(env.CREDENTIALS_DIRECTORY, 'client_secret')
    : undefined;
  const path = file || credentialFile;
  const fromVariable = file
    ? SETTINGS.clientSecretFile.env
    : '$CREDENTIALS_DIRECTORY/client_secret';
  if (!path) {
    problems.push(
      `${SETTINGS.clientSecret.env} is required (or ${SETTINGS.clientSecretFile.env}, or a systemd credential named client_secret)`,
    );
    return undefined;
  }
  try {
    const secret = readFileSync(path, 'utf8').trim();
    if (secret === '') problems.push(`${fromVariable}: the file ${path} is empty`);
    return secret || undefined;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    problems.push(`${fromVariable}: cannot read ${path} (${reason})`);
    return undefined;
  }
}

/** The configuration as it may be logged or shown: the secret replaced by a marker. */
export function redactConfig(config: Partial<Config>): Record<string, unknown> {
  const { clientSecret, ...rest } = config;
  return { ...rest, clientSecret: clientSecret ? '[set]' : '[unset]' };
}
