import { spawnSync } from 'node:child_process';

/** What a POSIX shell makes of an environment file. */
export interface ShellReading {
  /** The exit status of `set -a; . FILE` (non-zero when the shell refused the file). */
  status: number | null;
  stderr: string;
  /** The variables the file set (or changed), as the shell exported them. */
  values: Record<string, string>;
}

/** What `sh` exports with an empty file: the same for every reading. */
let baseline: Record<string, string> | undefined;

/** The environment `sh` exports after `set -a; . FILE`, minus what it exports without the file. */
export function readWithShell(path: string): ShellReading {
  const exported = (file: string) => {
    // The status of `.` is that of the file's last command: a command a line ran by accident
    // (`A=1 2` runs `2`) shows there and on stderr. __status itself is left out below.
    const script = 'set -a; . "$1"; __status=$?; env -0; exit $__status';
    const run = spawnSync('sh', ['-c', script, 'sh', file], {
      env: { PATH: '/usr/bin:/bin', HOME: '/home/nobody-here' },
      encoding: 'utf8',
    });
    const values: Record<string, string> = {};
    for (const entry of run.stdout.split('\0')) {
      const equals = entry.indexOf('=');
      const key = entry.slice(0, equals);
      if (equals > 0 && key !== '__status') values[key] = entry.slice(equals + 1);
    }
    return { status: run.status, stderr: run.stderr, values };
  };
  baseline ??= exported('/dev/null').values;
  const reading = exported(path);
  const values = Object.fromEntries(
    Object.entries(reading.values).filter(([key, value]) => baseline![key] !== value),
  );
  return { ...reading, values };
}

/**
 * systemd's reading of an EnvironmentFile, as src/basic/env-file.c of systemd 252 (Debian 12's)
 * parses it: a state machine over the characters, with "\n" and "\r" ending a line, "#" and ";"
 * starting a comment that a trailing backslash continues, whitespace around keys and values
 * dropped, quotes joined to what follows them, and backslash escapes. A model for comparing
 * readings (there is no systemd manager to ask in a container), not for production use.
 */
export function readLikeSystemd(text: string): Record<string, string> {
  type State =
    | 'preKey'
    | 'key'
    | 'preValue'
    | 'value'
    | 'valueEscape'
    | 'singleQuote'
    | 'doubleQuote'
    | 'doubleQuoteEscape'
    | 'comment'
    | 'commentEscape';
  const values: Record<string, string> = {};
  let state: State = 'preKey';
  let key = '';
  let value = '';
  /** Where trailing whitespace of the unquoted value began, or -1. */
  let valueWhitespaceAt = -1;
  const isNewline = (c: string) => c === '\n' || c === '\r';
  const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
  const push = () => {
    if (valueWhitespaceAt >= 0) value = value.slice(0, valueWhitespaceAt);
    const name = key.trimEnd();
    if (/^[^=\s]+$/.test(name)) values[name] = value;
    key = '';
    value = '';
    valueWhitespaceAt = -1;
  };
  for (const c of text) {
    switch (state) {
      case 'preKey':
        if (c === '#' || c === ';') state = 'comment';
        else if (!isWhitespace(c)) {
          state = 'key';
          key = c;
        }
        break;
      case 'key':
        if (isNewline(c)) {
          state = 'preKey';
          key = '';
        } else if (c === '=') {
          state = 'preValue';
          valueWhitespaceAt = -1;
        } else key += c;
        break;
      case 'preValue':
        if (isNewline(c)) {
          state = 'preKey';
          push();
        } else if (c === "'") state = 'singleQuote';
        else if (c === '"') state = 'doubleQuote';
        else if (c === '\\') state = 'valueEscape';
        else if (!isWhitespace(c)) {
          state = 'value';
          value += c;
        }
        break;
      case 'value':
        if (isNewline(c)) {
          state = 'preKey';
          push();
        } else if (c === '\\') {
          state = 'valueEscape';
          valueWhitespaceAt = -1;
        } else {
          if (!isWhitespace(c)) valueWhitespaceAt = -1;
          else if (valueWhitespaceAt < 0) valueWhitespaceAt = value.length;
          value += c;
        }
        break;
      case 'valueEscape':
        state = 'value';
        if (!isNewline(c)) value += c;
        break;
      case 'singleQuote':
        if (c === "'") state = 'preValue';
        else value += c;
        break;
      case 'doubleQuote':
        if (c === '"') state = 'preValue';
        else if (c === '\\') state = 'doubleQuoteEscape';
        else value += c;
        break;
      case 'doubleQuoteEscape':
        state = 'doubleQuote';
        if ('"\\`$'.includes(c)) value += c;
        else if (c !== '\n') value += `\\${c}`;
        break;
      case 'comment':
        if (c === '\\') state = 'commentEscape';
        else if (isNewline(c)) state = 'preKey';
        break;
      case 'commentEscape':
        state = 'comment';
        break;
    }
  }
  if (state !== 'preKey' && state !== 'key' && state !== 'comment' && state !== 'commentEscape') {
    push();
  }
  return values;
}
