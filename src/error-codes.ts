/**
 * How an error ends a command: `usage` (exit 2) is the operator's to fix before anything runs
 * (a flag, a setting, a key file); `failure` (exit 1) is everything else.
 */
export type ExitClass = 'usage' | 'failure';

/** One area's catalog: each code with its exit class. */
export type ErrorCatalog = Readonly<Record<string, ExitClass>>;

/**
 * The error catalogs, one entry per area, e.g. `api: typeof API_ERROR_CODES`. Empty here: each
 * src/<area>/error-codes.ts adds its own entry by declaration merging, so that the codes are known
 * at this bottom layer without it importing the areas above it. A code is `area.reason`, stable
 * once published (logs, status and scripts match on it): add codes, never rename one.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the areas' catalogs
export interface ErrorCatalogs {}

/** A code from the catalogs; `internal` stands for a thrown value that is not ours. */
export type ErrorCode = {
  [Area in keyof ErrorCatalogs]: keyof ErrorCatalogs[Area] & string;
}[keyof ErrorCatalogs];

/** An area's prefix, e.g. `api.`: matches every code of that area. */
export type ErrorArea = `${ErrorCode extends `${infer Area}.${string}` ? Area : never}.`;
