import { applyEnvironmentFile, configHelpText, configMarkdownTable } from '../config/index.js';
import { EXIT, usageError, type CliIo, type Command } from './command.js';
import { COMMAND_NAMES, type CommandName } from './command-names.js';
import { reportError } from './output.js';
import { packageVersion } from './version.js';

/**
 * Every command's module, by its name (command-names.ts holds the names and their order). A
 * command's module (and the library behind it) is loaded only when that command runs: a backfill
 * does not carry the simulator, the PostgreSQL driver or the metrics registry in its memory.
 */
const COMMAND_MODULES: Record<CommandName, () => Promise<Command>> = {
  run: async () => (await import('./run.js')).runCommand,
  sync: async () => (await import('./sync.js')).syncCommand,
  backfill: async () => (await import('./backfill.js')).backfillCommand,
  accept: async () => (await import('./accept.js')).acceptCommand,
  decline: async () => (await import('./decline.js')).declineCommand,
  state: async () => (await import('./state.js')).stateCommand,
  locations: async () => (await import('./locations.js')).locationsCommand,
  'change-request': async () => (await import('./change-request.js')).changeRequestCommand,
  'best-time': async () => (await import('./best-time.js')).bestTimeCommand,
  status: async () => (await import('./status.js')).statusCommand,
  gaps: async () => (await import('./gaps.js')).gapsCommand,
  changes: async () => (await import('./changes.js')).changesCommand,
  doctor: async () => (await import('./doctor.js')).doctorCommand,
  backup: async () => (await import('./backup.js')).backupCommand,
  prune: async () => (await import('./prune.js')).pruneCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  copy: async () => (await import('./copy.js')).copyCommand,
  demo: async () => (await import('./demo.js')).demoCommand,
  simulator: async () => (await import('./simulator.js')).simulatorCommand,
};

/** Commands that read no environment file: they bring their own settings. */
const STANDALONE_COMMANDS = new Set(['demo', 'simulator']);

export { COMMAND_NAMES };

/** Loads one command's module; undefined for a name that is not a command. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  return Object.hasOwn(COMMAND_MODULES, name) ? COMMAND_MODULES[name as CommandName]() : undefined;
}

/** Loads every command (for `help`). */
export async function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMAND_NAMES.map((name) => COMMAND_MODULES[name]()));
}

/**
 * `help` and `version`, which `main` answers itself, as the command list shows them. Each row's
 * synopsis and summary are also README.md's command table (a unit test holds the two together).
 */
export const BUILT_IN_COMMANDS = [
  {
    name: 'help',
    synopsis: 'help [command | config]',
    summary:
      "The command list, a command's usage and exit codes (help <command>), or every setting (help config)",
  },
  { name: 'version', synopsis: 'version', summary: 'Print the version' },
] as const;

/** Columns of the help text; longer summaries wrap under their own column. */
const HELP_WIDTH = 100;

/** `text` broken at spaces into lines of at most `width` characters (a longer word stays whole). */
function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return [...lines, line];
}

async function helpText(): Promise<string> {
  const rows = [...(await loadCommands()), ...BUILT_IN_COMMANDS];
  const width = Math.max(...rows.map((row) => row.name.length));
  const indent = ' '.repeat(width + 4);
  const lines = rows.map(({ name, summary }) =>
    wrapWords(summary, HELP_WIDTH - indent.length)
      .map((part, index) => (index === 0 ? `  ${name.padEnd(width)}  ${part}` : indent + part))
      .join('\n'),
  );
  return `Usage: transport-sync <command> [options]

Keeps a local copy of a transport provider's requests, in SQLite or PostgreSQL: received by
webhook and polled from the service, with the provider's answers carried back to it.

Commands:
${lines.join('\n')}

Configuration comes from environment variables and the environment file
/etc/transport-sync/transport-sync.env (TRANSPORT_ENV_FILE; see help config).
Exit codes: 0 ok, 1 failure, 2 bad usage or configuration; help <command> lists a command's own.`;
}

/** The spellings `main` takes for `help` and `version` besides their names. */
const BUILT_IN_FLAGS = ['--help', '-h', '--version'];

/** Whether `main` answers `name` itself (`help` of it prints the command list). */
function isBuiltIn(name: string): boolean {
  return BUILT_IN_FLAGS.includes(name) || BUILT_IN_COMMANDS.some((row) => row.name === name);
}

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    if (rest[0] === 'config') {
      io.stdout.write(`${rest[1] === '--markdown' ? configMarkdownTable() : configHelpText()}\n`);
      return EXIT.ok;
    }
    const topic = rest[0];
    const command = topic === undefined ? undefined : await loadCommand(topic);
    // A typo must not read as success: `help` of an unknown command fails as running it would.
    if (topic !== undefined && !command && !isBuiltIn(topic)) {
      return reportError(usageError(`unknown command "${topic}"`), io, await helpText());
    }
    io.stdout.write(`${command ? command.usage : await helpText()}\n`);
    return EXIT.ok;
  }
  if (name === 'version' || name === '--version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = await loadCommand(name);
  if (!command) return reportError(usageError(`unknown command "${name}"`), io, await helpText());
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.usage}\n`);
    return EXIT.ok;
  }
  try {
    // The daemon's settings, for a command typed at a shell as for the unit. The demo and the
    // simulator stand alone: a server's settings (its TLS files, its allowlist) are not theirs.
    if (!STANDALONE_COMMANDS.has(name)) applyEnvironmentFile(io.env);
    return await command.run(rest, io);
  } catch (error) {
    return reportError(error, io, command.usage);
  }
}
