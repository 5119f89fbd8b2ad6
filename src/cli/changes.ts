import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../config/index.js';
import { openForReading, targetOf } from '../db/open.js';
import type { ChangeDocument } from '../feed/document.js';
import { createFeedReader } from '../feed/reader.js';
import { streamChanges } from '../feed/stream.js';
import { DB_FLAG, EXIT, parseCommandArgs, parseIntegerFlag, type Command } from './command.js';

/** How often --follow looks for new changes. */
const FOLLOW_INTERVAL_MS = 200;

/** `transport-sync changes`: the change feed as lines on stdout. */
export const changesCommand: Command = {
  name: 'changes',
  summary: "The mirror's change feed, one change a line in commit order; --follow waits for more",
  usage: `Usage: transport-sync changes [--since POS] [--limit N] [--follow] [--json] [--include-phi] [--db PATH]

Prints the mirror's changes in the order they committed, one a line: a request that is new, that
changed (kind changed, or state when its list_state or request_current_state moved), or that the
service no longer shows us (unavailable). Each line begins with the change's position: run again
with --since that position to go on after it, missing nothing that committed since.

  --since POS    print the changes after position POS (default 0: from the oldest kept)
  --limit N      stop after N changes
  --follow       at the end, wait for new changes and print them as they commit, until
                 Ctrl-C or SIGTERM
  --json         each change as the JSON document of docs/feed.md (NDJSON)
  --include-phi  include names, dates of birth and e-mail addresses (left out by default)
  --db PATH      the mirror (default: TRANSPORT_DB)

Reads the database (read-only, never migrates). Changes older than TRANSPORT_RETENTION_DAYS are
pruned; docs/feed.md says how to read the feed without losing any.
Exit codes: 0 done (or stopped by Ctrl-C or SIGTERM, or its reader closed the pipe), 1 the
database cannot be read, 2 bad usage or configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...DB_FLAG,
      since: { type: 'string' },
      limit: { type: 'string' },
      follow: { type: 'boolean' },
      json: { type: 'boolean' },
      'include-phi': { type: 'boolean' },
    });
    const max = Number.MAX_SAFE_INTEGER;
    const after = parseIntegerFlag('since', values.since, { min: 0, max, fallback: 0 });
    const limit = parseIntegerFlag('limit', values.limit, { min: 1, max, fallback: max });
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const db = await openForReading(targetOf(config));
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const output = createLineWriter(io.stdout, controller);
    try {
      await streamChanges({
        reader: createFeedReader(db),
        after,
        limit,
        isFollowing: values.follow === true,
        isPhiIncluded: values['include-phi'] === true,
        signal: controller.signal,
        pause: (signal) => sleep(FOLLOW_INTERVAL_MS, undefined, { signal }).catch(() => {}),
        emit: (document) =>
          output.write(values.json ? JSON.stringify(document) : textLine(document)),
      });
      return EXIT.ok;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await db.close();
    }
  },
};

/**
 * Writes lines, waiting while the stream is full; a reader that goes away (`head`, a closed
 * pipe) stops the stream instead of failing it.
 */
function createLineWriter(stream: NodeJS.WritableStream, controller: AbortController) {
  stream.on('error', () => controller.abort());
  return {
    async write(line: string): Promise<void> {
      if (controller.signal.aborted) return;
      if (stream.write(`${line}\n`)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          controller.signal.removeEventListener('abort', done);
          resolve();
        };
        stream.on('drain', done);
        controller.signal.addEventListener('abort', done);
      });
    },
  };
}

/** One change for people: position, time, request, kind, and what moved. */
function textLine(document: ChangeDocument): string {
  const what =
    document.kind === 'state'
      ? `${document.old_state ?? '-'} -> ${document.new_state ?? '-'}`
      : document.changed_columns.join(',');
  return [document.position, document.committed_at, document.request_id, document.kind, what]
    .join('  ')
    .trimEnd();
}
