import { hash } from 'node:crypto';

/**
 * requests.received_digest of a record's text as sent: SHA-1, base64url (27 characters). It
 * tells a record received again unchanged from the text alone: comparing the text itself would
 * read every stored raw_json (on PostgreSQL, send every record to the server) at each idle cycle.
 */
export const receivedDigest = (text: string): string => hash('sha1', text, 'base64url');
