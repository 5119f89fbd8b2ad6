/*
 * What TRANSPORT_DB names, told from the text alone: kept apart from the engines so that naming a
 * location loads neither driver. Which engine a location names is the setting's to say (its
 * checks differ by engine), so that test lives with the setting and is passed on from here.
 */

export { isPostgresLocation } from '../config/settings.js';

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
