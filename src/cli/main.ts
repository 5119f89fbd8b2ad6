import { configHelpText, configMarkdownTable } from '../config/index.js';
import { acceptCommand } from './accept.js';
import { backfillCommand } from './backfill.js';
import { backupCommand } from './backup.js';
import { bestTimeCommand } from './best-time.js';
import { changeRequestCommand } from './change-request.js';
import { copyCommand } from './copy.js';
import { declineCommand } from './decline.js';
import { demoCommand } from './demo.js';
import { doctorCommand } from './doctor.js';
import { gapsCommand } from './gaps.js';
import { EXIT, usageError, type CliIo, type Command } from './command.js';
import { migrateCommand } from './migrate.js';
import { locationsCommand } from './locations.js';
import { reportError } from './output.js';
import { pruneCommand } from './prune.js';
import { runCommand } from './run.js';
import { simulatorCommand } from './simulator.js';
import { stateCommand } from './state.js';
import { statusCommand } from './status.js';
import { syncCommand } from './sync.js';
import { packageVersion } from './version.js';

/** Every command, in the order `help` lists them. */
export const COMMANDS: Command[] = [
  runCommand,
  syncCommand,
  backfillCommand,
  acceptCommand,
  declineCommand,
  stateCommand,
  locationsCommand,
  changeRequestCommand,
  bestTimeCommand,
  statusCommand,
  gapsCommand,
  doctorCommand,
  backupCommand,
  pruneCommand,
  migrateCommand,
  copyCommand,
  demoCommand,
  simulatorCommand,
];

function helpText(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const lines = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
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
    const command = COMMANDS.find((candidate) => candidate.name === rest[0]);
    io.stdout.write(`${command ? command.usage : helpText()}\n`);
    return EXIT.ok;
  }
  if (name === 'version' || name === '--version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) return reportError(usageError(`unknown command "${name}"`), io, helpText());
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
