/**
 * The syntax of the environment file: the part of it that a POSIX shell (`set -a; . FILE`) and
 * systemd (`EnvironmentFile=FILE`) read alike. Both take `KEY=value`, `KEY="a value"`,
 * `KEY='a value'`, `# comments` and blank lines; past that they part ways (a space in an unquoted
 * value runs a command in a shell, and is part of the value for systemd; systemd continues a
 * comment that ends in a backslash onto the next line; a shell expands `$` and backquotes, and
 * systemd does not). Such lines are refused with their line number, so that the daemon and a
 * command typed at a shell can never read one file two ways. Pure: text in, values or problems out.
 */

/** One refused line: its number (from 1) and what is wrong with it. */
export interface EnvFileProblem {
  line: number;
  message: string;
}

/** The variables a file sets (a later line wins over an earlier one), or what is wrong with it. */
export interface EnvFileContents {
  values: Record<string, string>;
  problems: EnvFileProblem[];
}

/** A name both accept: a shell's, which is the narrower. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Characters an unquoted value may hold: none has a meaning to a shell or to systemd. */
const UNQUOTED = /^[A-Za-z0-9_@%+=:,./[\]-]*$/;

/** Characters a double-quoted value must not hold: a shell expands them, systemd does not. */
const DOUBLE_QUOTED_SPECIAL = /[$`\\]/;

/** Parses an environment file's text: every variable it sets, and every line either would misread. */
export function parseEnvFile(text: string): EnvFileContents {
  const values: Record<string, string> = {};
  const problems: EnvFileProblem[] = [];
  if (text.startsWith('\uFEFF')) {
    // Invisible, and part of the first name for both readers: that line would set nothing.
    return {
      values,
      problems: [{ line: 1, message: 'a byte order mark: save the file as UTF-8 without one' }],
    };
  }
  const lines = text.split('\n');
  // A final newline ends the last line; it does not start an empty one.
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((content, index) => {
    const result = parseLine(content);
    if (result === undefined) return;
    if ('problem' in result) problems.push({ line: index + 1, message: result.problem });
    else values[result.name] = result.value;
  });
  return { values, problems };
}

type LineResult = { name: string; value: string } | { problem: string } | undefined;

function parseLine(content: string): LineResult {
  if (content.includes('\r')) {
    return { problem: 'a carriage return: save the file with Unix line endings (LF)' };
  }
  // systemd reads the file as a C string (it would end at a NUL), and a shell keeps the rest.
  if ([...content].some(isControlCharacter)) {
    return { problem: 'a control character: only printable text and tabs are read alike' };
  }
  const line = content.replace(/^[ \t]+/, '');
  if (line === '') return undefined;
  if (line.startsWith('#')) {
    return line.endsWith('\\')
      ? { problem: 'a comment ending in a backslash: systemd reads the next line as comment too' }
      : undefined;
  }
  if (line.startsWith(';')) {
    return { problem: 'a comment starting with ";": a shell reads it as a command; use "#"' };
  }
  const equals = line.indexOf('=');
  const name = equals < 0 ? line : line.slice(0, equals);
  if (equals < 0 || !NAME.test(name)) return { problem: describeBadName(line, name, equals) };
  const parsed = parseValue(line.slice(equals + 1));
  return 'problem' in parsed ? parsed : { name, value: parsed.value };
}

/** A control character other than the tab. */
function isControlCharacter(character: string): boolean {
  const code = character.charCodeAt(0);
  return (code < 0x20 && character !== '\t') || code === 0x7f;
}

function describeBadName(line: string, name: string, equals: number): string {
  if (/^export[ \t]/.test(line)) {
    return 'starts with "export": write KEY=value, which a shell exports under set -a';
  }
  if (equals < 0) return 'not a KEY=value line (comments start with "#")';
  if (/[ \t]$/.test(name)) return 'a space before "=": write KEY=value, no spaces around "="';
  return `"${name.slice(0, 40)}" is not a variable name (letters, digits and _, not starting with a digit)`;
}

function parseValue(text: string): { value: string } | { problem: string } {
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    const end = text.indexOf(quote, 1);
    if (end < 0) {
      return { problem: `no closing ${quote}: a quoted value must end on its own line` };
    }
    const value = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (!/^[ \t]*$/.test(rest)) {
      return {
        problem: /^[ \t]+#/.test(rest)
          ? 'a comment after the value: systemd keeps it as part of the value; put comments on their own line'
          : 'text after the closing quote: quote the whole value, and nothing after it',
      };
    }
    if (quote === '"' && DOUBLE_QUOTED_SPECIAL.test(value)) {
      return {
        problem:
          'a $, ` or \\ in double quotes: a shell expands it, systemd does not; use single quotes',
      };
    }
    return { value };
  }
  const value = text.replace(/[ \t]+$/, '');
  if (UNQUOTED.test(value)) return { value };
  const bad = [...value].find((character) => !UNQUOTED.test(character)) ?? '';
  if (bad === ' ' || bad === '\t') {
    return {
      problem: /^[ \t]/.test(value)
        ? 'a space after "=": a shell runs the rest as a command; write KEY=value or KEY="value"'
        : 'a space in an unquoted value: a shell runs the rest as a command; quote it: KEY="a b"',
    };
  }
  return {
    problem: `"${bad}" in an unquoted value: quote the value, KEY="..." (or KEY='...' for $, \` and \\)`,
  };
}
