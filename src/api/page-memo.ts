import { hash } from 'node:crypto';

/**
 * The full list's pages as a pass read them, by the digest of their body.
 *
 * An idle cycle reads the same awaiting pages again and again. A page answered byte for byte as
 * before holds the same records, spelled the same, so their ids and received digests are known
 * without decoding and parsing the page, writing each record back to text and hashing it: most
 * of what an idle cycle spent on a page. Whether the mirror still holds those records is asked anew at every
 * pass (the caller's isKnown); the memo only spares the work of reading what it is asked about.
 *
 * A pass looks pages up among those of the pass before it and its own, and what it read becomes
 * what the next pass looks up in: the memo holds one pass's pages (an id and a digest per record,
 * some 100 bytes) and forgets what the service no longer sends.
 */

/** A record of a page: its id (null when it has none) and the digest of its text. */
export interface PageRecord {
  id: string | null;
  digest: string;
}

/** What a page's body said, all that a reread of it needs. */
export interface ReadPage {
  /** The page number the body answered with. */
  page: number;
  pages: number;
  records: PageRecord[];
}

/** The digest of a body's bytes, by which its page is remembered and looked up. */
export const digestOfBody = (body: Uint8Array): string => hash('sha1', body, 'base64url');

/** One pass over the pages. */
export interface MemoPass {
  lookup(bodyDigest: string): ReadPage | undefined;
  remember(bodyDigest: string, page: ReadPage): void;
  /** Ends the pass: the next looks up in what this one read. */
  end(): void;
}

export interface PageMemo {
  startPass(): MemoPass;
}

export function createPageMemo(): PageMemo {
  let before = new Map<string, ReadPage>();
  return {
    startPass() {
      const read = new Map<string, ReadPage>();
      return {
        lookup: (bodyDigest) => read.get(bodyDigest) ?? before.get(bodyDigest),
        remember: (bodyDigest, page) => void read.set(bodyDigest, page),
        end: () => void (before = read),
      };
    },
  };
}
