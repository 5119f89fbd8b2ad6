import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEnvironmentFile, parseEnvFile } from '../../../src/config/index.js';
import { isTransportError } from '../../../src/errors.js';
import { readLikeSystemd, readWithShell } from '../../helpers/env-file.js';
import { tempDir } from '../../helpers/records.js';

/** The message of the first problem `text` has, with its line number. */
function problemOf(text: string): string {
  const [first] = parseEnvFile(text).problems;
  expect(first, text).toBeDefined();
  return `line ${first!.line}: ${first!.message}`;
}

describe('parseEnvFile', () => {
  it('reads KEY=value, both quotes, comments and blank lines', () => {
    const text = [
      '# the service',
      'TRANSPORT_AUTH_URL=https://auth.example.com/',
      '',
      '   # indented comment',
      '  TRANSPORT_CLIENT_ID=client-1   ',
      'TRANSPORT_POLL_CRON="0 */5 6-20 * * *"',
      'TRANSPORT_PASSWORDISH=\'a$b`c\\d "e"\'',
      'TRANSPORT_WEBHOOK_LISTEN=[::1]:8787',
      'TRANSPORT_WEBHOOK_ALLOW_FROM=203.0.113.0/24,2001:db8:5::/48',
      'EMPTY=',
      'QUOTED_EMPTY=""',
      'TRANSPORT_CLIENT_ID=client-2',
      'UNICODE="Zürich, Øresund"',
    ].join('\n');
    expect(parseEnvFile(`${text}\n`)).toEqual({
      values: {
        TRANSPORT_AUTH_URL: 'https://auth.example.com/',
        // A later line wins, as in a shell and in systemd.
        TRANSPORT_CLIENT_ID: 'client-2',
        TRANSPORT_POLL_CRON: '0 */5 6-20 * * *',
        TRANSPORT_PASSWORDISH: 'a$b`c\\d "e"',
        TRANSPORT_WEBHOOK_LISTEN: '[::1]:8787',
        TRANSPORT_WEBHOOK_ALLOW_FROM: '203.0.113.0/24,2001:db8:5::/48',
        EMPTY: '',
        QUOTED_EMPTY: '',
        UNICODE: 'Zürich, Øresund',
      },
      problems: [],
    });
    // The last line needs no newline.
    expect(parseEnvFile('A=1\nB=2').values).toEqual({ A: '1', B: '2' });
  });

  it('refuses, with the line number, each line a shell and systemd would read differently', () => {
    const cases: [string, RegExp][] = [
      ['A=1\nTRANSPORT_POLL_CRON=0 * * * * *', /^line 2: a space in an unquoted value/],
      ['A= 1', /^line 1: a space after "="/],
      ['A="1" 2', /^line 1: text after the closing quote/],
      ['A="1" # one', /^line 1: a comment after the value/],
      ['A=\'1\'"2"', /^line 1: text after the closing quote/],
      ['A=1"2"', /^line 1: """ in an unquoted value/],
      ['A=$HOME', /^line 1: "\$" in an unquoted value/],
      ['A="$HOME/x"', /^line 1: a \$, ` or \\ in double quotes/],
      ['A="`id`"', /^line 1: a \$, ` or \\ in double quotes/],
      ['A="a\\"b"', /^line 1: text after the closing quote|a \$, ` or \\/],
      ['A=one\\', /^line 1: "\\" in an unquoted value/],
      ['A=~/key.pem', /^line 1: "~" in an unquoted value/],
      ['A=a;b', /^line 1: ";" in an unquoted value/],
      ['A="unterminated', /^line 1: no closing "/],
      ["A='\nB=1'", /^line 1: no closing '/],
      ['A=1\r\nB=2', /^line 1: a carriage return/],
      ['# a comment that goes on \\\nA=1', /^line 1: a comment ending in a backslash/],
      ['; a comment', /^line 1: a comment starting with ";"/],
      ['export A=1', /^line 1: starts with "export"/],
      ['A =1', /^line 1: a space before "="/],
      ['1A=1', /^line 1: "1A" is not a variable name/],
      ['A.B=1', /^line 1: "A.B" is not a variable name/],
      ['JUST_A_WORD', /^line 1: not a KEY=value line/],
      ['\uFEFFA=1', /^line 1: a byte order mark/],
      ["A='x\0y'", /^line 1: a control character/],
    ];
    for (const [text, expected] of cases) expect(problemOf(text), text).toMatch(expected);
  });

  it('lists every refused line, and still reads the good ones', () => {
    const { values, problems } = parseEnvFile('A=1\nB=x y\n\n# ok\nC=$D\nE=2\n');
    expect(values).toEqual({ A: '1', E: '2' });
    expect(problems.map(({ line }) => line)).toEqual([2, 5]);
  });

  it('reads what it accepts exactly as sh (set -a; . FILE) and systemd do, for any lines', () => {
    const dir = tempDir();
    const name = fc.constantFrom('A', 'B', 'K_1', '_X', 'TRANSPORT_DB', 'lower');
    const safe = 'abcXYZ019_@%+=:,./-[]';
    const tricky = ` \t"'$\`\\#;~*?!&|<>(){}é\r`;
    const text = (alphabet: string) =>
      fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 });
    // Safe text, safe text with one tricky character in it, or anything.
    const anyText = fc.oneof(
      { weight: 2, arbitrary: text(safe) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.oneof(fc.constant(''), text(safe)), fc.constantFrom(...tricky), text(safe))
          .map(([before, odd, after]) => `${before}${odd}${after}`),
      },
      { weight: 1, arbitrary: text(safe + tricky) },
    );
    const value = fc.oneof(
      { weight: 3, arbitrary: anyText },
      { weight: 1, arbitrary: anyText.map((inner) => `"${inner}"`) },
      { weight: 1, arbitrary: anyText.map((inner) => `'${inner}'`) },
      { weight: 1, arbitrary: fc.tuple(anyText, anyText).map(([a, b]) => `"${a}"${b}`) },
    );
    const line = fc.oneof(
      {
        weight: 7,
        arbitrary: fc
          .tuple(fc.constantFrom('', '', '', ' ', '\t '), name, value)
          .map(([indent, key, text]) => `${indent}${key}=${text}`),
      },
      { weight: 1, arbitrary: anyText.map((comment) => `#${comment}`) },
      { weight: 1, arbitrary: fc.constantFrom('', '  ', '; note', 'export A=1', 'B =2') },
    );
    let linesCompared = 0;
    let filesRead = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), (lines) => {
        // Only the lines the parser accepts are ever given to a shell: a refused line may run a
        // command there.
        const accepted = lines.filter((candidate) => {
          const { problems } = parseEnvFile(`${candidate}\n`);
          return problems.length === 0 && !candidate.includes('\n');
        });
        const file = `${accepted.join('\n')}\n`;
        const ours = parseEnvFile(file);
        expect(ours.problems).toEqual([]);
        const path = join(dir, `case-${filesRead++}.env`);
        writeFileSync(path, file);
        const shell = readWithShell(path);
        expect(shell.status, `${file}\n${shell.stderr}`).toBe(0);
        expect(shell.stderr).toBe('');
        expect(shell.values, file).toEqual(ours.values);
        expect(readLikeSystemd(file), file).toEqual(ours.values);
        linesCompared += accepted.length;
      }),
      { numRuns: 150, seed: 20260812 },
    );
    // Enough accepted lines to mean something, tricky characters in quotes among them.
    expect(linesCompared).toBeGreaterThan(300);
  });

  it('refuses lines that systemd and a shell do read differently', () => {
    const dir = tempDir();
    const differing: [string, { systemd: string | undefined; shell: string | undefined }][] = [
      // A shell runs the command 2 with A=1 in its environment, and sets nothing.
      ['A="1" 2', { systemd: '12', shell: undefined }],
      ['A=1 # note', { systemd: '1 # note', shell: '1' }],
      ['# a comment \\\nA=1', { systemd: undefined, shell: '1' }],
      ['A="$PATH"', { systemd: '$PATH', shell: '/usr/bin:/bin' }],
      ["A='1'\r", { systemd: '1', shell: '1\r' }],
      ['A=~/key.pem', { systemd: '~/key.pem', shell: '/home/nobody-here/key.pem' }],
    ];
    for (const [text, readings] of differing) {
      const path = join(dir, 'case.env');
      writeFileSync(path, `${text}\n`);
      expect(parseEnvFile(`${text}\n`).problems.length, text).toBeGreaterThan(0);
      expect(readLikeSystemd(`${text}\n`).A, text).toBe(readings.systemd);
      expect(readWithShell(path).values.A, text).toBe(readings.shell);
    }
  });
});

describe('applyEnvironmentFile', () => {
  it('adds what the environment lacks; the environment wins, even when empty', () => {
    const dir = tempDir();
    const file = join(dir, 'transport-sync.env');
    writeFileSync(file, 'TRANSPORT_DB=/var/lib/x.db\nTRANSPORT_POLL=off\nLOG_LEVEL=debug\n');
    const env: NodeJS.ProcessEnv = {
      TRANSPORT_ENV_FILE: file,
      TRANSPORT_POLL: 'on',
      LOG_LEVEL: '',
    };
    expect(applyEnvironmentFile(env)).toBe(file);
    expect(env).toEqual({
      TRANSPORT_ENV_FILE: file,
      TRANSPORT_DB: '/var/lib/x.db',
      TRANSPORT_POLL: 'on',
      LOG_LEVEL: '',
    });
  });

  it('reads the default file when it exists, and nothing when it does not', () => {
    const dir = tempDir();
    const defaultPath = join(dir, 'etc', 'transport-sync.env');
    const missing: NodeJS.ProcessEnv = {};
    expect(applyEnvironmentFile(missing, { defaultPath })).toBeUndefined();
    expect(missing).toEqual({});
    mkdirSync(join(dir, 'etc'));
    writeFileSync(defaultPath, 'TRANSPORT_DB=/srv/mirror.db\n');
    const found: NodeJS.ProcessEnv = {};
    expect(applyEnvironmentFile(found, { defaultPath })).toBe(defaultPath);
    expect(found.TRANSPORT_DB).toBe('/srv/mirror.db');
    // TRANSPORT_ENV_FILE= turns it off.
    const off: NodeJS.ProcessEnv = { TRANSPORT_ENV_FILE: '' };
    expect(applyEnvironmentFile(off, { defaultPath })).toBeUndefined();
    expect(off.TRANSPORT_DB).toBeUndefined();
  });

  it('refuses a named file that is missing, a directory, a refused line, or a file naming a file', () => {
    const dir = tempDir();
    const refusal = (env: NodeJS.ProcessEnv, defaultPath?: string) => {
      try {
        applyEnvironmentFile(env, defaultPath === undefined ? {} : { defaultPath });
      } catch (error) {
        expect(isTransportError(error, 'config.env_file')).toBe(true);
        return error as Error & { hint?: string };
      }
      throw new Error('expected config.env_file');
    };
    const missing = refusal({ TRANSPORT_ENV_FILE: join(dir, 'nope.env') });
    expect(missing.message).toMatch(/nope\.env \(named by TRANSPORT_ENV_FILE\): no such file/);
    expect(missing.hint).toMatch(/TRANSPORT_ENV_FILE= \(empty\)/);
    expect(refusal({ TRANSPORT_ENV_FILE: dir }).message).toMatch(/a directory, not a file/);
    // The default path being a directory is not "missing": it is refused too.
    expect(refusal({}, dir).message).toMatch(/\(the default\): a directory/);
    const bad = join(dir, 'bad.env');
    writeFileSync(bad, '# settings\nTRANSPORT_POLL_CRON=0 * * * * *\n');
    const syntax = refusal({ TRANSPORT_ENV_FILE: bad });
    expect(syntax.message).toMatch(/bad\.env is refused: line 2: a space in an unquoted value/);
    expect(syntax.hint).toMatch(/set -a; \. FILE/);
    const nested = join(dir, 'nested.env');
    writeFileSync(nested, 'TRANSPORT_ENV_FILE=/etc/other.env\n');
    expect(refusal({ TRANSPORT_ENV_FILE: nested }).message).toMatch(/sets TRANSPORT_ENV_FILE/);
    const latin1 = join(dir, 'latin1.env');
    writeFileSync(latin1, Buffer.from([0x41, 0x3d, 0x22, 0xe9, 0x22, 0x0a]));
    expect(refusal({ TRANSPORT_ENV_FILE: latin1 }).message).toMatch(/not UTF-8/);
    const withBom = join(dir, 'bom.env');
    writeFileSync(withBom, '\uFEFFTRANSPORT_DB=/srv/mirror.db\n');
    expect(refusal({ TRANSPORT_ENV_FILE: withBom }).message).toMatch(/line 1: a byte order mark/);
  });

  it.skipIf(process.getuid?.() === 0)(
    'refuses a default file it may not read, saying whom to run as',
    () => {
      const dir = tempDir();
      const defaultPath = join(dir, 'transport-sync.env');
      writeFileSync(defaultPath, 'TRANSPORT_DB=/srv/mirror.db\n');
      chmodSync(defaultPath, 0o000);
      let error: (Error & { hint?: string }) | undefined;
      try {
        applyEnvironmentFile({}, { defaultPath });
      } catch (caught) {
        error = caught as Error & { hint?: string };
      }
      expect(error?.message).toMatch(/\(the default\): permission denied \(EACCES\)/);
      expect(error?.hint).toMatch(/runuser -u transport-sync -- transport-sync/);
    },
  );
});
