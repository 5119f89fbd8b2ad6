/*
 * What TRANSPORT_DB names, told from the text alone: kept apart from the engines so that naming a
 * location loads neither driver.
 */

/** A postgres:// or postgresql:// URL names a PostgreSQL mirror; anything else is a file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** The URL without its password, for logs and messages. */
export function postgresLocation(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
