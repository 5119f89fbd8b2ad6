import { answerCommand } from './action-command.js';

/** `transport-sync accept <id> [--notes TEXT]`: accepts a broadcast request. */
export const acceptCommand = answerCommand({
  kind: 'accept',
  summary: 'Accept a broadcast request, then refresh its row',
  description: `Accepts the request for this organization, with optional response notes (at most 450
characters), then re-reads it into the mirror. If the reply is lost, the request is read back to
tell whether the accept took effect.`,
});
