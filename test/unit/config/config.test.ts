import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configMarkdownTable, loadConfig, SETTINGS } from '../../../src/config/index.js';
import { isTransportError } from '../../../src/errors.js';

const service = {
  TRANSPORT_AUTH_URL: 'https://auth.example.com/',
  TRANSPORT_HUB_URL: 'https://hub.example.com',
  TRANSPORT_BASE_URL: 'https://api.example.com/base/',
  TRANSPORT_CLIENT_ID: 'client-1',
  TRANSPORT_CLIENT_SECRET: 's3cret-value',
};

function problem(env: NodeJS.ProcessEnv, needsService = true): string {
  try {
    loadConfig({ env, needsService });
  } catch (error) {
    expect(isTransportError(error, 'config.invalid')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a config error');
}

describe('loadConfig', () => {
  it('fills every default and parses typed values', () => {
    const config = loadConfig({
      env: { ...service, TRANSPORT_STATES: 'completed, accepted,accepted' },
      needsService: true,
    });
    expect(config).toMatchObject({
      baseUrl: 'https://api.example.com/base/',
      clientSecret: 's3cret-value',
      windowPastHours: 72,
      windowFutureHours: 336,
      states: ['completed', 'accepted'],
      concurrency: 4,
      rateLimitPerSec: 0,
      isPollingOn: true,
      logLevel: 'info',
    });
  });

  it('names the variable and what is wrong', () => {
    expect(problem({ ...service, TRANSPORT_CONCURRENCY: 'lots' })).toMatch(
      /TRANSPORT_CONCURRENCY must be a whole number from 1 to 64 \(got "lots"\)/,
    );
    expect(problem({ ...service, TRANSPORT_BASE_URL: 'ftp://x' })).toMatch(
      /TRANSPORT_BASE_URL must be an http\(s\) URL/,
    );
    // A password in a URL would be logged with the configuration at start: refused, never echoed.
    const withPassword = problem({
      ...service,
      TRANSPORT_FEED_WEBHOOK_URL: 'https://dispatch:hunter2@dispatch.example.net/changes',
    });
    expect(withPassword).toMatch(
      /TRANSPORT_FEED_WEBHOOK_URL must be an http\(s\) URL without query, fragment or user:password/,
    );
    expect(withPassword).not.toContain('hunter2');
    expect(problem({ ...service, TRANSPORT_STATES: 'accepted,pending' })).toMatch(
      /TRANSPORT_STATES/,
    );
    expect(problem({ ...service, LOG_LEVEL: 'loud' })).toMatch(/LOG_LEVEL must be one of/);
    for (const cidrs of ['10.0.0.0/33', '203.0.113.0/24,example.com', '2001:db8::/129', '1.2.3']) {
      expect(problem({ ...service, TRANSPORT_WEBHOOK_ALLOW_FROM: cidrs }), cidrs).toMatch(
        /TRANSPORT_WEBHOOK_ALLOW_FROM must be comma-separated CIDRs/,
      );
    }
    expect(problem({ ...service, TRANSPORT_WEBHOOK_TLS_CERT_FILE: '/etc/cert.pem' })).toMatch(
      /go together: set both or neither/,
    );
    const { TRANSPORT_CLIENT_ID: _omitted, ...withoutId } = service;
    expect(problem(withoutId)).toMatch(/TRANSPORT_CLIENT_ID is required/);
  });

  it('takes NATS servers as a list, never with credentials or wildcards', () => {
    const config = loadConfig({
      env: { TRANSPORT_FEED_NATS_URL: 'nats://n1.example.net:4222, tls://n2.example.net:4222' },
      needsService: false,
    });
    expect(config).toMatchObject({
      feedNatsUrl: ['nats://n1.example.net:4222', 'tls://n2.example.net:4222'],
      feedNatsSubject: 'transport.requests.changes',
      isFeedNatsPhiIncluded: false,
    });
    for (const url of [
      'nats://dispatch:hunter2@n1.example.net:4222',
      'nats://s3cr3ttoken@n1.example.net:4222',
      'https://n1.example.net:4222',
      'nats://n1.example.net:4222,',
    ]) {
      const text = problem({ TRANSPORT_FEED_NATS_URL: url }, false);
      expect(text, url).toMatch(/TRANSPORT_FEED_NATS_URL must be nats:\/\/ or tls:\/\/ URLs/);
      expect(text).not.toMatch(/hunter2|s3cr3ttoken/);
    }
    for (const subject of ['transport.*', 'transport.>', 'transport..changes', 'a b']) {
      expect(problem({ TRANSPORT_FEED_NATS_SUBJECT: subject }, false), subject).toMatch(
        /TRANSPORT_FEED_NATS_SUBJECT must be a NATS subject without wildcards/,
      );
    }
  });

  it('needs no service settings for commands that only use the database', () => {
    expect(loadConfig({ env: {}, needsService: false }).dbPath).toBe('./data/transport-sync.db');
  });

  it('reads the secret from a file or a systemd credential, and never prints it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ts-config-'));
    writeFileSync(join(dir, 'secret'), '  from-file\n');
    writeFileSync(join(dir, 'client_secret'), 'from-credential\n');
    const { TRANSPORT_CLIENT_SECRET: _omitted, ...base } = service;
    expect(
      loadConfig({
        env: { ...base, TRANSPORT_CLIENT_SECRET_FILE: join(dir, 'secret') },
        needsService: true,
      }).clientSecret,
    ).toBe('from-file');
    expect(
      loadConfig({ env: { ...base, CREDENTIALS_DIRECTORY: dir }, needsService: true }).clientSecret,
    ).toBe('from-credential');
    expect(problem({ ...base, TRANSPORT_CLIENT_SECRET_FILE: join(dir, 'missing') })).toMatch(
      /TRANSPORT_CLIENT_SECRET_FILE: cannot read .*ENOENT/,
    );
    const both = problem({
      ...service,
      TRANSPORT_CLIENT_SECRET_FILE: join(dir, 'secret'),
      TRANSPORT_CONCURRENCY: '0',
    });
    expect(both).toMatch(/set only one/);
    expect(both).not.toContain('s3cret-value');
    expect(both).not.toContain('from-file');
  });

  it('lets flags override the environment', () => {
    const config = loadConfig({
      env: { ...service, TRANSPORT_DB: '/env.db' },
      needsService: true,
      overrides: { dbPath: '/flag.db' },
    });
    expect(config.dbPath).toBe('/flag.db');
  });
});

describe('configMarkdownTable', () => {
  it('lists every setting', () => {
    const table = configMarkdownTable();
    for (const setting of Object.values(SETTINGS)) expect(table).toContain(`\`${setting.env}\``);
  });
});
