import { isOutcomeUnknown } from '../api/index.js';
import { ONE_SHOT_CONNECTIONS } from '../db/open.js';
import { createSyncContext, type SyncContext } from '../daemon/context.js';
import { describeError, isTransportError, TransportError } from '../errors.js';
import {
  checkText,
  describeRefusal,
  judge,
  observeRequest,
  sendAction,
  type Checked,
  type OutboxAction,
} from '../outbox/index.js';
import { refreshRequest } from '../sync/refresh.js';
import {
  DB_FLAG,
  EXIT,
  parseCommandArgs,
  usageError,
  type CliIo,
  type Command,
} from './command.js';
import { setupCommand } from './setup.js';

/**
 * What the provider-action commands share: arguments are checked before anything is opened or
 * sent (exit 2, no call), the service's refusals are printed plainly (exit 1), and a result line
 * goes to stdout.
 */

// An action that did not take effect, found out by reading the request back.
const REFUSED = 'cli.action_not_done';

/** A refused argument: exit 2, without the usage text (the message says what is wrong). */
export function invalidArgument(reason: string): TransportError {
  return new TransportError({ code: 'cli.invalid_argument', message: reason });
}

/** The checked value, or the refusal thrown as an exit-2 error. */
export function valueOf<T>(checked: Checked<T>): T {
  if (!checked.ok) throw invalidArgument(checked.reason);
  return checked.value;
}

/** The one positional: the request id. */
export function requestIdOf(positionals: string[]): string {
  const [id] = positionals;
  if (positionals.length !== 1 || !id?.trim()) throw usageError('expected one request id');
  return id;
}

/** Runs `send` with a sync context, printing refusals plainly; resolves to the exit code. */
export async function withService(
  io: CliIo,
  dbPath: string | undefined,
  send: (context: SyncContext) => Promise<string>,
  verb: string,
): Promise<number> {
  const { config, log } = setupCommand(io, { needsService: true, dbPath });
  const context = await createSyncContext({
    config,
    log,
    maxConnections: ONE_SHOT_CONNECTIONS,
  });
  try {
    io.stdout.write(`${await send(context)}\n`);
    return EXIT.ok;
  } catch (error) {
    const refusal = isTransportError(error, REFUSED) ? error.message : describeRefusal(error);
    if (refusal === undefined && !isOutcomeUnknown(error)) throw error;
    const text =
      refusal ??
      `the outcome is unknown (${describeError(error).message}): the service may have recorded it`;
    io.stderr.write(`transport-sync: error: ${verb}: ${text}\n`);
    return EXIT.failure;
  } finally {
    await context.close();
  }
}

/**
 * Sends an accept or decline, then refreshes the mirror row. When the reply is lost, the request
 * is read back to tell whether it took effect (a resend would answer 403 either way).
 */
export async function answerRequest(
  context: SyncContext,
  requestId: string,
  action: Extract<OutboxAction, { kind: 'accept' | 'decline' }>,
  io: CliIo,
): Promise<string> {
  const done = action.kind === 'accept' ? 'accepted' : 'declined';
  try {
    await sendAction(context.client, requestId, action);
  } catch (error) {
    if (!isOutcomeUnknown(error)) throw error;
    // If the read-back fails too, the outcome stays unknown: report the original failure.
    const observed = await observeRequest(context, requestId).catch(() => Promise.reject(error));
    const verdict = judge(action.kind, observed);
    if (verdict.outcome === 'sent')
      return `${done} ${requestId} (the reply was lost; ${verdict.note})`;
    const why =
      verdict.outcome === 'failed'
        ? verdict.reason
        : 'the reply was lost and the request is still awaiting: nothing happened, run the command again';
    throw new TransportError({ code: REFUSED, message: why });
  }
  try {
    await refreshRequest(context, requestId, { source: 'action' });
    return `${done} ${requestId}; mirror row refreshed`;
  } catch (error) {
    io.stderr.write(
      `transport-sync: warning: mirror refresh failed (${describeError(error).message}); the next poll stores it\n`,
    );
    return `${done} ${requestId}`;
  }
}

/**
 * `accept` and `decline`: the same arguments, checks and flow; only their words differ.
 * `description` is the usage paragraph between the synopsis and the exit codes.
 */
export function answerCommand({
  kind,
  summary,
  description,
}: {
  kind: 'accept' | 'decline';
  summary: string;
  description: string;
}): Command {
  const done = kind === 'accept' ? 'accepted' : 'declined';
  return {
    name: kind,
    summary,
    usage: `Usage: transport-sync ${kind} <id> [--notes TEXT] [--db PATH]

${description}
Exit codes: 0 ${done}, 1 refused by the service (403 not available to you: already assigned,
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
        (context) => answerRequest(context, requestId, { kind, notes }, io),
        `${kind} ${requestId}`,
      );
    },
  };
}
