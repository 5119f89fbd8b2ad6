import { checkTimestamp, sendAction } from '../outbox/index.js';
import { requestIdOf, valueOf, withService } from './action-command.js';
import { DB_FLAG, parseCommandArgs, usageError, type Command } from './command.js';

/** `transport-sync best-time <id> --at ISO`: proposes the best pickup time. */
export const bestTimeCommand: Command = {
  name: 'best-time',
  summary: 'Propose the best pickup time for a broadcast request',
  usage: `Usage: transport-sync best-time <id> --at ISO [--db PATH]

Proposes the pickup time this organization can make (v2.0 best time), ISO 8601. The requester
agrees to it or not later.
Exit codes: 0 sent, 1 refused by the service (403, 404, 400 with its messages) or failed,
2 bad arguments (nothing is sent).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, at: { type: 'string' } },
      { allowPositionals: true },
    );
    const requestId = requestIdOf(positionals);
    if (values.at === undefined) throw usageError('--at is required');
    const at = valueOf(checkTimestamp(values.at, '--at'));
    return withService(
      io,
      values.db,
      async ({ client }) => {
        await sendAction(client, requestId, { kind: 'best_time', at });
        return `best time proposed for ${requestId}: pickup at ${at}`;
      },
      `best-time ${requestId}`,
    );
  },
};
