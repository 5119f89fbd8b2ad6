import { checkText } from '../outbox/index.js';
import { answerRequest, requestIdOf, valueOf, withService } from './action-command.js';
import { DB_FLAG, parseCommandArgs, type Command } from './command.js';

/** `transport-sync decline <id> [--notes TEXT]`: declines a broadcast request. */
export const declineCommand: Command = {
  name: 'decline',
  summary: 'Decline a broadcast request, then refresh its mirror row',
  usage: `Usage: transport-sync decline <id> [--notes TEXT] [--db PATH]

Declines the request for this organization, with optional response notes (at most 450
characters), then re-reads it into the mirror (where it shows as unavailable). If the reply is
lost, the request is read back to tell whether the decline took effect.
Exit codes: 0 declined, 1 refused by the service (403 not available to you: already assigned,
declined or canceled; 404 unknown request id; 400 invalid) or failed, 2 bad arguments (nothing
is sent).`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...DB_FLAG, notes: { type: 'string' } },
      { allowPositionals: true },
    );
    const requestId = requestIdOf(positionals);
    const notes = valueOf(checkText(values.notes, 'notes'));
    return withService(
      io,
      values.db,
      (context) => answerRequest(context, requestId, { kind: 'decline', notes }, io),
      `decline ${requestId}`,
    );
  },
};
