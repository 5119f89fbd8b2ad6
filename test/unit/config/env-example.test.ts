import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseEnvFile, SETTINGS } from '../../../src/config/index.js';
import { readLikeSystemd, readWithShell } from '../../helpers/env-file.js';
import { tempDir } from '../../helpers/records.js';

const EXAMPLE = readFileSync(
  new URL('../../../systemd/transport-sync.env.example', import.meta.url),
  'utf8',
);
const UNIT = readFileSync(
  new URL('../../../systemd/transport-sync.service', import.meta.url),
  'utf8',
);

/** A commented-out setting: `#TRANSPORT_...=` or `#LOG_LEVEL=`. */
const COMMENTED_SETTING = /^#((?:TRANSPORT_[A-Z0-9_]+|LOG_LEVEL)=)/gm;

/** The example with every commented-out setting taken in, as an operator might. */
const UNCOMMENTED = EXAMPLE.replace(COMMENTED_SETTING, '$1');

/** The settings a text sets, line by line, in order (a later line for the same name included). */
function settingLines(text: string): [string, string][] {
  return text
    .split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => {
      const equals = line.indexOf('=');
      return [line.slice(0, equals), parseEnvFile(line).values[line.slice(0, equals)]!];
    });
}

describe('systemd/transport-sync.env.example', () => {
  it('reads the same to sh (set -a; . FILE), to systemd and to the CLI, as shipped and with every setting uncommented', () => {
    expect(EXAMPLE.match(COMMENTED_SETTING)?.length).toBeGreaterThan(15);
    const dir = tempDir();
    for (const [name, text] of [
      ['shipped.env', EXAMPLE],
      ['uncommented.env', UNCOMMENTED],
    ] as const) {
      const ours = parseEnvFile(text);
      expect(ours.problems, name).toEqual([]);
      const path = join(dir, name);
      writeFileSync(path, text);
      const shell = readWithShell(path);
      expect(shell.status, shell.stderr).toBe(0);
      expect(shell.stderr).toBe('');
      expect(shell.values, name).toEqual(ours.values);
      expect(readLikeSystemd(text), name).toEqual(ours.values);
    }
    // The cron pattern, which needs its quotes, is among them.
    expect(parseEnvFile(UNCOMMENTED).values.TRANSPORT_POLL_CRON).toBe('0 * * * * *');
  });

  it('holds valid settings only, each one a setting transport-sync knows', () => {
    const known = new Set(Object.values(SETTINGS).map((setting) => setting.env));
    const names = settingLines(UNCOMMENTED).map(([name]) => name);
    expect(names.filter((name) => !known.has(name))).toEqual([]);
    const { values } = parseEnvFile(UNCOMMENTED);
    // Secrets are not in the file; the rest loads as `run` loads it.
    expect(Object.keys(values).filter((name) => /SECRET|PASSWORD/.test(name))).toEqual([]);
    expect(() =>
      loadConfig({ env: { ...values, TRANSPORT_CLIENT_SECRET: 'x' }, needsService: true }),
    ).not.toThrow();
    expect(() =>
      loadConfig({ env: parseEnvFile(EXAMPLE).values, needsService: false }),
    ).not.toThrow();
  });

  it('shows each commented-out setting at its default, but for the alternatives it offers', () => {
    const alternatives = new Set([
      'TRANSPORT_POLL',
      'TRANSPORT_WEBHOOK_SILENCE_HOURS',
      'TRANSPORT_WEBHOOK_LISTEN',
    ]);
    const defaults = new Map(
      Object.values(SETTINGS)
        .filter((setting) => setting.defaultText !== undefined)
        .map((setting) => [setting.env, setting.defaultText]),
    );
    const commented = settingLines(
      [...EXAMPLE.matchAll(/^#((?:TRANSPORT_[A-Z0-9_]+|LOG_LEVEL)=.*)$/gm)]
        .map((match) => match[1])
        .join('\n'),
    );
    const wrong = commented.filter(
      ([name, value]) =>
        defaults.has(name) && !alternatives.has(name) && defaults.get(name) !== value,
    );
    expect(wrong).toEqual([]);
  });

  it('configures the webhook receiver first and polling last, as the legacy path, and holds the database', () => {
    const position = (pattern: RegExp) => EXAMPLE.search(pattern);
    const receiver = position(/^TRANSPORT_WEBHOOK_LISTEN=/m);
    expect(receiver).toBeGreaterThan(0);
    for (const receiverSetting of [
      /^#TRANSPORT_WEBHOOK_TLS_CERT_FILE=/m,
      /^#TRANSPORT_TRUSTED_PROXIES=/m,
      /^#TRANSPORT_WEBHOOK_ALLOW_FROM=/m,
    ]) {
      expect(position(receiverSetting)).toBeGreaterThan(receiver);
      expect(position(receiverSetting)).toBeLessThan(position(/^#TRANSPORT_POLL=/m));
    }
    expect(EXAMPLE).toMatch(/legacy[^]*retired its v1\.0 polling reads on 2026-08-12/);
    // The database is the file's, in the unit's StateDirectory; the unit sets no setting itself.
    const stateDirectory = UNIT.match(/^StateDirectory=(\S+)$/m)?.[1];
    expect(parseEnvFile(EXAMPLE).values.TRANSPORT_DB).toBe(
      `/var/lib/${stateDirectory}/transport-sync.db`,
    );
    expect(UNIT.match(/^Environment=TRANSPORT_.*$/gm)).toEqual(['Environment=TRANSPORT_ENV_FILE=']);
  });
});
