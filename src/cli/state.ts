import { STATE_NAMES } from '../api/index.js';
import { systemClock } from '../clock.js';
import { checkStateName, checkStateTimestamp, sendAction } from '../outbox/index.js';
import { isoFromMs } from '../time.js';
import { invalidArgument, valueOf, withService } from './action-command.js';
import { DB_FLAG, parseCommandArgs, usageError, type Command } from './command.js';

/** `transport-sync state <id> <name> [--at ISO]`: reports a trip's state change. */
export const stateCommand: Command = {
  name: 'state',
  summary: 'Report a state change of an accepted request (en_route, arrived, on_board, ...)',
  usage: `Usage: transport-sync state <id> <name> [--at ISO] [--db PATH]

Sends a state update. <name> is one of:
  ${STATE_NAMES.join(', ')}
--at is when it happened (ISO 8601, default now); the service takes no time in the future
(a minute of clock skew aside) and none older than 7 days.
Exit codes: 0 sent, 1 refused by the service (403, 404, 400 with its messages) or failed,
2 bad arguments (nothing is sent).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, at: { type: 'string' } },
      { allowPositionals: true },
    );
    const [requestId, rawName] = positionals;
    if (positionals.length !== 2 || !requestId?.trim() || rawName === undefined) {
      throw usageError('expected a request id and a state name');
    }
    const name = valueOf(checkStateName(rawName));
    const nowMs = systemClock.now();
    if (values.at === '') throw invalidArgument('--at is empty');
    const at = valueOf(checkStateTimestamp(values.at ?? isoFromMs(nowMs), nowMs));
    return withService(
      io,
      values.db,
      async ({ client }) => {
        await sendAction(client, requestId, { kind: 'state', name, at });
        return `state ${name} sent for ${requestId} at ${at}`;
      },
      `state ${requestId}`,
    );
  },
};
