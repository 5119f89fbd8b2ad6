import { readFileSync } from 'node:fs';
import { TransportError } from '../errors.js';
import { parseEnvFile } from './env-file.js';

/** The file the unit names in EnvironmentFile=, and which every command reads by default. */
export const DEFAULT_ENV_FILE = '/etc/transport-sync/transport-sync.env';

/** Names another environment file; set but empty, no file is read. */
export const ENV_FILE_VARIABLE = 'TRANSPORT_ENV_FILE';

/** Problems listed in one error; the rest are counted. */
const MOST_PROBLEMS_SHOWN = 5;

const SYNTAX_HINT =
  'Write KEY=value, KEY="value with spaces" or KEY=\'value with $\', one per line, and comments on lines of their own starting with #: the file must read the same to systemd (EnvironmentFile=) and to a shell (set -a; . FILE). See docs/configuration.md.';

/**
 * Adds the settings of the environment file to `env`, in place: a variable already in `env`
 * wins over the file, so that systemd (which read the file into the environment already) and a
 * command typed at a shell see the same settings, and a variable given on the command line can
 * still override one. In place, because some libraries read the process environment themselves
 * (pg's PGPASSFILE, for one). Returns the path of the file read, or undefined when none was.
 *
 * The file is `TRANSPORT_ENV_FILE`, else /etc/transport-sync/transport-sync.env when that exists;
 * `TRANSPORT_ENV_FILE=` (empty) reads none. A named file that is missing, any file that cannot be
 * read, and any line that a shell and systemd would read differently is a `config.env_file`
 * error (exit 2).
 */
export function applyEnvironmentFile(
  env: NodeJS.ProcessEnv,
  { defaultPath = DEFAULT_ENV_FILE }: { defaultPath?: string } = {},
): string | undefined {
  const named = env[ENV_FILE_VARIABLE];
  const isNamed = named !== undefined;
  const path = isNamed ? named.trim() : defaultPath;
  if (path === '') return undefined;

  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    if (!isNamed && (reason === 'ENOENT' || reason === 'ENOTDIR')) return undefined;
    throw unreadable(path, reason, isNamed);
  }
  let text: string;
  try {
    // A byte order mark is kept, for the parser to refuse: systemd would read it as text.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalid(path, 'it is not UTF-8 text');
  }
  const { values, problems } = parseEnvFile(text);
  if (problems.length > 0) {
    const shown = problems
      .slice(0, MOST_PROBLEMS_SHOWN)
      .map(({ line, message }) => `line ${line}: ${message}`);
    const more = problems.length - shown.length;
    throw invalid(path, `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
  }
  if (values[ENV_FILE_VARIABLE] !== undefined) {
    throw invalid(path, `it sets ${ENV_FILE_VARIABLE}, which names the file and cannot be in it`);
  }
  for (const [name, value] of Object.entries(values)) {
    if (env[name] === undefined) env[name] = value;
  }
  return path;
}

/** What an errno code means here, in words. */
const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'a directory, not a file',
};

function unreadable(path: string, reason: string, isNamed: boolean): TransportError {
  const origin = isNamed ? `named by ${ENV_FILE_VARIABLE}` : 'the default';
  const why = REASONS[reason] ? `${REASONS[reason]} (${reason})` : reason;
  const withoutFile = `or set ${ENV_FILE_VARIABLE}= (empty) to read no file.`;
  const hint =
    reason === 'ENOENT' || reason === 'ENOTDIR'
      ? `Check the path in ${ENV_FILE_VARIABLE}, ${withoutFile}`
      : reason === 'EACCES' || reason === 'EPERM'
        ? `It holds the daemon's settings: run the command as the daemon's user (runuser -u transport-sync -- transport-sync ...) or as root, ${withoutFile}`
        : `${ENV_FILE_VARIABLE} must name a file of KEY=value lines, ${withoutFile}`;
  return new TransportError({
    code: 'config.env_file',
    message: `cannot read the environment file ${path} (${origin}): ${why}`,
    hint,
  });
}

function invalid(path: string, what: string): TransportError {
  return new TransportError({
    code: 'config.env_file',
    message: `the environment file ${path} is refused: ${what}`,
    hint: SYNTAX_HINT,
  });
}
