import { checkText, checkTimestamp, sendAction } from '../outbox/index.js';
import { requestIdOf, valueOf, withService } from './action-command.js';
import { DB_FLAG, parseCommandArgs, usageError, type Command } from './command.js';

/** `transport-sync change-request <id> --at ISO --reason TEXT`: proposes a new pickup time. */
export const changeRequestCommand: Command = {
  name: 'change-request',
  summary: 'Propose a new pickup time for an accepted request',
  usage: `Usage: transport-sync change-request <id> --at ISO --reason TEXT [--db PATH]

Submits a change request (v2.0): the proposed pickup time (--at, ISO 8601) and the reason (at
most 450 characters). The requester accepts or declines it later.
Exit codes: 0 sent, 1 refused by the service (403, 404, 400 with its messages) or failed,
2 bad arguments (nothing is sent).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, at: { type: 'string' }, reason: { type: 'string' } },
      { allowPositionals: true },
    );
    const requestId = requestIdOf(positionals);
    if (values.at === undefined || values.reason === undefined) {
      throw usageError('--at and --reason are required');
    }
    const at = valueOf(checkTimestamp(values.at, '--at'));
    const reason = valueOf(checkText(values.reason, '--reason', { isRequired: true })) as string;
    return withService(
      io,
      values.db,
      async ({ client }) => {
        await sendAction(client, requestId, { kind: 'change_request', at, reason });
        return `change request sent for ${requestId}: pickup at ${at}`;
      },
      `change-request ${requestId}`,
    );
  },
};
