import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { TransportError } from '../errors.js';
import { checkSample, type Sample } from '../outbox/index.js';
import { invalidArgument, requestIdOf, withService } from './action-command.js';
import { DB_FLAG, parseCommandArgs, usageError, type Command } from './command.js';

/** `transport-sync locations <id> --file FILE|-`: sends GPS samples. */
export const locationsCommand: Command = {
  name: 'locations',
  summary:
    'Send GPS samples of an accepted request, as a JSON array or NDJSON, from a file or stdin',
  usage: `Usage: transport-sync locations <id> --file FILE|- [--db PATH]

Sends location samples: a JSON array, or NDJSON (one JSON object per line), read from FILE or
from stdin with "-". Each sample has lat, lng, alt and timestamp (Unix epoch seconds, fractions
allowed), all numbers, and optionally speed. Every sample is checked before the first is sent;
they go in the order given, in calls of at most 200.
Exit codes: 0 all sent, 1 refused by the service or failed (the count already delivered is
shown), 2 bad arguments or samples (nothing is sent).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, file: { type: 'string' } },
      { allowPositionals: true },
    );
    const requestId = requestIdOf(positionals);
    if (values.file === undefined || values.file === '') throw usageError('--file is required');
    const samples = parseSamples(await readInput(values.file));
    return withService(
      io,
      values.db,
      async ({ client }) => {
        try {
          const { batches } = await client.sendLocations(requestId, samples);
          return `sent ${samples.length} samples for ${requestId} in ${batches} calls`;
        } catch (error) {
          // Earlier batches are stored at the service; say how far it got.
          if (
            error instanceof TransportError &&
            typeof error.details.deliveredSamples === 'number'
          ) {
            io.stderr.write(
              `transport-sync: ${error.details.deliveredSamples} of ${samples.length} samples were delivered before the failure\n`,
            );
          }
          throw error;
        }
      },
      `locations ${requestId}`,
    );
  },
};

async function readInput(file: string): Promise<string> {
  try {
    return file === '-' ? await text(process.stdin) : await readFile(file, 'utf8');
  } catch (error) {
    throw invalidArgument(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** A JSON array of samples, or NDJSON; every sample checked, every problem reported. */
export function parseSamples(input: string): Sample[] {
  const elements = parseElements(input);
  if (elements.length === 0) throw invalidArgument('no samples in the input');
  const problems: string[] = [];
  const samples: Sample[] = [];
  elements.forEach(({ value, where }) => {
    const checked = checkSample(value);
    if (checked.ok) samples.push(checked.value);
    else problems.push(`${where}: ${checked.reason}`);
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, 5).join('; ');
    const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
    throw invalidArgument(`invalid samples: ${shown}${more}`);
  }
  return samples;
}

function parseElements(input: string): { value: unknown; where: string }[] {
  const trimmed = input.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw invalidArgument(`the input is not a JSON array: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw invalidArgument('the input is not a JSON array');
    return parsed.map((value, index) => ({ value, where: `sample ${index}` }));
  }
  return input.split('\n').flatMap((line, index) => {
    if (line.trim() === '') return [];
    try {
      return [{ value: JSON.parse(line) as unknown, where: `line ${index + 1}` }];
    } catch {
      throw invalidArgument(`line ${index + 1} is not JSON`);
    }
  });
}
