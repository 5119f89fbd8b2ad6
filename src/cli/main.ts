import { configHelpText, configMarkdownTable } from '../config/index.js';
import { EXIT, usageError, type CliIo, type Command } from './command.js';
import { reportError } from './output.js';
import { packageVersion } from './version.js';

/**
 * Every command, in the order `help` lists them. A command's module (and the library behind it)
 * is loaded only when that command runs: a backfill does not carry the simulator, the PostgreSQL
 * driver or the metrics registry in its memory.
 */
const COMMAND_MODULES: Record<string, () => Promise<Command>> = {
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
  doctor: async () => (await import('./doctor.js')).doctorCommand,
  backup: async () => (await import('./backup.js')).backupCommand,
  prune: async () => (await import('./prune.js')).pruneCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  copy: async () => (await import('./copy.js')).copyCommand,
  demo: async () => (await import('./demo.js')).demoCommand,
  simulator: async () => (await import('./simulator.js')).simulatorCommand,
};

/** The command names, in the order `help` lists them. */
export const COMMAND_NAMES = Object.keys(COMMAND_MODULES);

/** Loads one command's module; undefined for a name that is not a command. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  return Object.hasOwn(COMMAND_MODULES, name) ? COMMAND_MODULES[name]!() : undefined;
}

/** Loads every command (for `help`). */
export async function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMAND_NAMES.map((name) => COMMAND_MODULES[name]!()));
}

async function helpText(): Promise<string> {
  const commands = await loadCommands();
  const width = Math.max(...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `Usage: transport-sync <command> [options]

Keeps a local SQLite mirror of a transport provider's requests.

Commands:
${lines.join('\n')}
  help       Show this help, a command's (help <command>), or the settings (help config)
  version    Print the version

Configuration comes from environment variables (see docs/configuration.md).
Exit codes: 0 ok, 1 failure, 2 bad usage or configuration.`;
}

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    if (rest[0] === 'config') {
      io.stdout.write(`${rest[1] === '--markdown' ? configMarkdownTable() : configHelpText()}\n`);
      return EXIT.ok;
    }
    const command = rest[0] === undefined ? undefined : await loadCommand(rest[0]);
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
    return await command.run(rest, io);
  } catch (error) {
    return reportError(error, io, command.usage);
  }
}
