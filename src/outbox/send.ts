import type { ServiceActions } from '../api/index.js';
import type { OutboxAction } from './validation.js';

/** Sends one checked action; the CLI and the drainer share it so both call the service alike. */
export async function sendAction(
  client: ServiceActions,
  requestId: string,
  action: OutboxAction,
  signal?: AbortSignal,
): Promise<void> {
  const withSignal = signal ? { signal } : {};
  switch (action.kind) {
    case 'accept':
      await client.accept(requestId, { responseNotes: action.notes, ...withSignal });
      return;
    case 'decline':
      await client.decline(requestId, { responseNotes: action.notes, ...withSignal });
      return;
    case 'state':
      await client.sendState(requestId, { name: action.name, timestamp: action.at, ...withSignal });
      return;
    case 'change_request':
      await client.changeRequest(requestId, {
        agreedDt: action.at,
        changeReason: action.reason,
        ...withSignal,
      });
      return;
    case 'best_time':
      await client.bestTime(requestId, { proposedAgreedDt: action.at, ...withSignal });
      return;
  }
}
