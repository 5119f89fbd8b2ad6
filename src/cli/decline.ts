import { answerCommand } from './action-command.js';

/** `transport-sync decline <id> [--notes TEXT]`: declines a broadcast request. */
export const declineCommand = answerCommand({
  kind: 'decline',
  summary: 'Decline a broadcast request, then refresh its row',
  description: `Declines the request for this organization, with optional response notes (at most 450
characters), then re-reads it into the mirror (where it shows as unavailable). If the reply is
lost, the request is read back to tell whether the decline took effect.`,
});
