import { readFileSync } from 'node:fs';
import { TransportError } from '../errors.js';

/** A sink's file setting (a secret, credentials, a CA), read at start; unreadable: exit 2. */
export function readSettingFile(file: string, setting: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new TransportError({
      code: 'feed.file_unreadable',
      message: `${setting} (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      hint: `check that the file exists and that the daemon's user may read it`,
      cause: error,
    });
  }
}
