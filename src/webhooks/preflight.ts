import type { Config } from '../config/index.js';
import { TransportError } from '../errors.js';
import { loadPublicKey } from './signature.js';
import { readTlsFiles } from './tls.js';

/** The settings the receiver's files come from. */
export type ReceiverFilesConfig = Pick<
  Config,
  | 'webhookListen'
  | 'webhookPublicKeyFile'
  | 'isWebhookUnsignedAllowed'
  | 'webhookTlsCertFile'
  | 'webhookTlsKeyFile'
>;

/**
 * Reads what the receiver will read at start (its public key, its TLS certificate and key) and
 * throws the error the receiver would throw. `run` asks before it starts anything, and `doctor`
 * asks the same question, so the two cannot disagree.
 */
export function checkReceiverFiles(config: ReceiverFilesConfig): void {
  if (!config.webhookListen) return;
  if (config.webhookPublicKeyFile) loadPublicKey(config.webhookPublicKeyFile);
  else if (!config.isWebhookUnsignedAllowed) throw missingKey();
  if (config.webhookTlsCertFile && config.webhookTlsKeyFile) {
    readTlsFiles({ certFile: config.webhookTlsCertFile, keyFile: config.webhookTlsKeyFile });
  }
}

/** No public key, and unsigned deliveries not allowed: the receiver could verify nothing. */
export function missingKey(): TransportError {
  return new TransportError({
    code: 'webhook.no_key',
    message: 'the webhook receiver needs a public key to verify signatures',
    hint: 'Set TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE to the PEM key from the service settings (or TRANSPORT_WEBHOOK_ALLOW_UNSIGNED=1 for tests and trials).',
  });
}
