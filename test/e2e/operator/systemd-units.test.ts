import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_FILES, DEFAULT_ENV_FILE } from '../../../src/config/index.js';
import { tempDir } from '../../helpers/records.js';

// The shipped units, checked by systemd's own tools. No systemd runs in the test container (it is
// not PID 1), so the units cannot be started here: `systemd-analyze verify` loads them as the
// manager would, and `systemd-sysusers --root` creates the user in a scratch root.

const SYSTEMD = new URL('../../../systemd/', import.meta.url).pathname;
const UNITS = [
  'transport-sync.service',
  'transport-sync-sync.service',
  'transport-sync-sync.timer',
];
const COMMAND = '/usr/local/bin/transport-sync';

const read = (name: string) => readFileSync(join(SYSTEMD, name), 'utf8');
const hasTool = (tool: string) => spawnSync(tool, ['--version']).status === 0;

/**
 * Copies the units into a scratch folder with the command replaced by a stub there (verify
 * refuses an ExecStart whose program does not exist, and the test machine has no
 * /usr/local/bin/transport-sync), applies `edit`, and verifies them.
 */
function verify(edit: (name: string, text: string) => string = (_, text) => text) {
  const dir = tempDir();
  const stub = join(dir, 'transport-sync');
  writeFileSync(stub, '#!/bin/sh\n');
  chmodSync(stub, 0o755);
  const paths = UNITS.map((name) => {
    const path = join(dir, name);
    writeFileSync(
      path,
      edit(name, read(name).replaceAll(`ExecStart=${COMMAND} `, `ExecStart=${stub} `)),
    );
    return path;
  });
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

describe.skipIf(!hasTool('systemd-analyze'))('the systemd units', () => {
  it('pass systemd-analyze verify without a warning, every credential recipe uncommented too', () => {
    expect(verify()).toEqual({ status: 0, output: '' });
    const withRecipes = verify((_, text) => text.replace(/^#(LoadCredential=)/gm, '$1'));
    expect(withRecipes).toEqual({ status: 0, output: '' });
    // The check can fail: a misspelt key and a credential without its path are reported.
    const broken = verify((name, text) =>
      name === 'transport-sync.service'
        ? text.replace('[Service]', '[Service]\nLoadCredentail=client_secret:/x\nLoadCredential=')
        : text,
    );
    expect(broken.output).toMatch(/Unknown key( name)? 'LoadCredentail'/);
  });

  it('run the installed command as the static user transport-sync, with settings from the environment file', () => {
    for (const name of ['transport-sync.service', 'transport-sync-sync.service']) {
      const text = read(name);
      expect(text).not.toMatch(/\/usr\/bin\/node|DynamicUser/);
      expect(text.match(/^ExecStart=.*$/m)?.[0]).toBe(
        `ExecStart=${COMMAND} ${name === 'transport-sync.service' ? 'run' : 'sync'}`,
      );
      expect(text).toMatch(/^User=transport-sync$/m);
      expect(text).toMatch(/^Group=transport-sync$/m);
      expect(text).toMatch(/^StateDirectory=transport-sync$/m);
      expect(text.match(/^EnvironmentFile=.*$/gm)).toEqual([`EnvironmentFile=${DEFAULT_ENV_FILE}`]);
      // systemd has read the file: the daemon does not read it again (nor fail on its mode).
      // The code cache goes to the unit's CacheDirectory (the private /tmp starts empty).
      expect(text.match(/^Environment=.*$/gm)).toEqual([
        'Environment=TRANSPORT_ENV_FILE=',
        'Environment=NODE_COMPILE_CACHE=/var/cache/transport-sync',
      ]);
      expect(text).toMatch(/^CacheDirectory=transport-sync$/m);
      expect(text).toMatch(/^CacheDirectoryMode=0700$/m);
    }
  });

  it('hand over every secret and key as a credential the CLI reads, the optional ones commented', () => {
    const text = read('transport-sync.service');
    const recipes = [...text.matchAll(/^(#?)LoadCredential=([^:]+):(\S+)$/gm)].map(
      ([, comment, name, path]) => ({ name, isActive: comment === '', path }),
    );
    const readByCli = ['client_secret', ...Object.values(CREDENTIAL_FILES)].sort();
    expect(recipes.map(({ name }) => name).sort()).toEqual(readByCli);
    expect(recipes.filter(({ isActive }) => isActive).map(({ name }) => name)).toEqual([
      'client_secret',
      'webhook_public_key',
    ]);
    for (const { path } of recipes) expect(path).toMatch(/^\/etc\/transport-sync\//);
  });
});

describe.skipIf(!hasTool('systemd-sysusers'))('systemd/transport-sync.sysusers', () => {
  it('creates the system user and group the units name, with its home in the state directory', () => {
    const root = tempDir();
    mkdirSync(join(root, 'etc'));
    const run = spawnSync(
      'systemd-sysusers',
      [`--root=${root}`, join(SYSTEMD, 'transport-sync.sysusers')],
      { encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
    const [name, , uid, , , home, shell] = passwd.trim().split(':');
    expect(name).toBe('transport-sync');
    // A system user: below the first uid of ordinary users.
    expect(Number(uid)).toBeLessThan(1000);
    expect(home).toBe('/var/lib/transport-sync');
    expect(shell).toMatch(/nologin$/);
    expect(readFileSync(join(root, 'etc/group'), 'utf8')).toMatch(/^transport-sync:x:\d+:$/m);
  });
});
