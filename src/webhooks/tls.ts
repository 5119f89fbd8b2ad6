import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { describeError, TransportError } from '../errors.js';
import type { Logger } from '../log.js';

/** The receiver's certificate and key files (PEM). */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** TLS 1.2 or later: the versions before it are broken or deprecated (RFC 8996). */
export const MIN_TLS_VERSION = 'TLSv1.2';

/** How often the files' modification times are checked for a renewal. */
const WATCH_INTERVAL_MS = 2_000;

/**
 * Reads the certificate and key and checks that they belong together (a renewal caught halfway,
 * a new certificate beside the old key, fails here rather than in a handshake).
 */
export function readTlsFiles({ certFile, keyFile }: TlsFiles): SecureContextOptions {
  let options: SecureContextOptions;
  try {
    options = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  } catch (error) {
    throw new TransportError({
      code: 'webhook.tls_unreadable',
      message: `cannot read the webhook TLS certificate or key: ${describeError(error).message}`,
      hint: 'Check TRANSPORT_WEBHOOK_TLS_CERT_FILE and TRANSPORT_WEBHOOK_TLS_KEY_FILE: PEM files readable by the service.',
      cause: error,
    });
  }
  try {
    createSecureContext({ ...options, minVersion: MIN_TLS_VERSION });
  } catch (error) {
    throw new TransportError({
      code: 'webhook.tls_invalid',
      message: `the webhook TLS certificate and key do not make a usable pair: ${describeError(error).message}`,
      hint: 'The key file must hold the private key of the certificate file (PEM, unencrypted).',
      cause: error,
    });
  }
  return options;
}

/**
 * Re-reads the certificate on SIGHUP and whenever either file changes, so that a renewal needs
 * no restart. A pair that cannot be read or does not match is logged and the one in use kept:
 * the next change (the renewal's second file, usually) tries again.
 */
export function watchTlsFiles(server: HttpsServer, files: TlsFiles, log: Logger): () => void {
  const reload = (why: string) => {
    try {
      server.setSecureContext({ ...readTlsFiles(files), minVersion: MIN_TLS_VERSION });
      // Idle keep-alive connections would go on with the old certificate: the next delivery
      // comes over a new connection, with the new one.
      server.closeIdleConnections();
      log.info({ why }, 'webhook TLS certificate reloaded');
    } catch (error) {
      log.error(
        { why, err: describeError(error) },
        'webhook TLS certificate not reloaded; the previous one stays in use',
      );
    }
  };
  const onHangup = () => reload('SIGHUP');
  const onChange = (current: { mtimeMs: number }, previous: { mtimeMs: number }) => {
    if (current.mtimeMs !== previous.mtimeMs) reload('file changed');
  };
  process.on('SIGHUP', onHangup);
  for (const file of [files.certFile, files.keyFile]) {
    watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, onChange);
  }
  return () => {
    process.off('SIGHUP', onHangup);
    for (const file of [files.certFile, files.keyFile]) unwatchFile(file, onChange);
  };
}
