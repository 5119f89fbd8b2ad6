import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { TransportError } from '../errors.js';

/** Checks a delivery's signature header against its raw body bytes. */
export type SignatureVerifier = (body: Buffer, signature: string | undefined) => boolean;

/**
 * Reads the PEM public key the organization admin downloaded from the service. Only RSA keys:
 * the service signs with RSA-SHA256, and accepting another key type would accept other schemes.
 */
export function loadPublicKey(path: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TransportError({
      code: 'webhook.key_unreadable',
      message: `cannot read the webhook public key ${path}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      hint: 'Check TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE and that this user may read the file.',
      cause: error,
    });
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new TransportError({
      code: 'webhook.key_invalid',
      message: `the webhook public key ${path} is not a PEM public key`,
      hint: "Download the public key again from the service's settings; it starts with -----BEGIN PUBLIC KEY-----.",
      cause: error,
    });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new TransportError({
      code: 'webhook.key_invalid',
      message: `the webhook public key ${path} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; the service signs with RSA`,
      hint: "Use the RSA public key from the service's webhook settings.",
    });
  }
  return key;
}

/**
 * A verifier of base64 RSA-SHA256 (PKCS#1 v1.5) signatures over the raw body. The bytes are
 * verified as received, before any parsing: re-serialized JSON would not match the signature.
 */
export function createVerifier(key: KeyObject): SignatureVerifier {
  return (body, signature) => {
    const text = signature?.trim();
    if (!text || !/^[A-Za-z0-9+/=_-]+$/.test(text)) return false;
    try {
      return verify('sha256', body, key, Buffer.from(text, 'base64'));
    } catch {
      // A signature of the wrong length throws in some OpenSSL versions: it is simply invalid.
      return false;
    }
  };
}
