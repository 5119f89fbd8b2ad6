import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_COMMANDS, loadCommands } from '../../../src/cli/main.js';

// README.md's command table and `transport-sync help` say the same thing: each command's synopsis
// is its usage's first line, and its description is the summary `help` prints. A command added,
// renamed or described anew on one side only fails here.

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const DB_FLAG = ' [--db PATH]';

interface Row {
  name: string;
  synopsis: string;
  summary: string;
}

/** The lines of README's "## Commands" section, up to the next heading of that level. */
function commandsSection(): string[] {
  const lines = README.split('\n');
  const start = lines.indexOf('## Commands');
  expect(start, 'README.md has a "## Commands" section').toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Markdown inline text as plain text: code spans, links and escaped pipes as `help` shows them. */
function plain(cell: string): string {
  return cell
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\\\|/g, '|')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The rows of README's command table, below its header, as plain text. */
function readmeRows(): Row[] {
  const table = commandsSection().filter((line) => line.startsWith('|'));
  const [header, separator, ...body] = table;
  expect(header).toMatch(/^\|\s*command\s*\|\s*what it does\s*\|$/);
  expect(separator).toMatch(/^\|[-\s|]+\|$/);
  return body.map((line) => {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1);
    expect(cells, line).toHaveLength(2);
    const [usage, description] = cells.map(plain) as [string, string];
    const synopsis = usage.replace(/^transport-sync /, '');
    expect(usage, 'the first column starts with the program name').toBe(
      `transport-sync ${synopsis}`,
    );
    return {
      name: synopsis.split(' ')[0]!,
      synopsis,
      // A sentence in the README, a line in `help`: only the closing period differs.
      summary: description.replace(/\.$/, ''),
    };
  });
}

/** The rows `help` lists: every command's name, synopsis (without --db) and summary. */
async function helpRows(): Promise<Row[]> {
  const commands = (await loadCommands()).map(({ name, summary, usage }) => {
    const firstLine = usage.split('\n')[0]!;
    expect(firstLine, `${name}: usage starts with its synopsis`).toMatch(
      new RegExp(`^Usage: transport-sync ${name}( |$)`),
    );
    const synopsis = firstLine.replace(/^Usage: transport-sync /, '').replace(DB_FLAG, '');
    return { name, synopsis, summary };
  });
  return [...commands, ...BUILT_IN_COMMANDS.map((row) => ({ ...row }))];
}

describe("README's command table", () => {
  it('lists the commands help lists, in its order, with the same synopsis and summary', async () => {
    const readme = readmeRows();
    const help = await helpRows();
    expect(readme.map((row) => row.name)).toEqual(help.map((row) => row.name));
    expect(readme).toEqual(help);
  });

  it('is right that every command but simulator, help and version takes --db PATH', async () => {
    expect(commandsSection().join('\n')).toContain(
      'Every command but `simulator`, `help` and `version` also takes `--db PATH`',
    );
    const withoutDb = (await loadCommands())
      .filter((command) => !command.usage.split('\n')[0]!.endsWith(DB_FLAG))
      .map((command) => command.name);
    expect(withoutDb).toEqual(['simulator']);
  });
});
