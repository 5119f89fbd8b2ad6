/**
 * How rough the simulator is: the ways the real service departs from its documentation or makes a
 * mirror's life hard. All are on by default, so a client is tested against the service as it is;
 * each has a setting that turns it off (`lastUpdated: 'strict'`, a rate of 0).
 */
import * as z from 'zod';

const rate = z.number().min(0).max(1);

/** Roughness settings, validated (see `Roughness`); every member optional. */
export const roughnessSchema = z.strictObject({
  lastUpdated: z.enum(['second', 'strict']).optional(),
  pagingChurnRate: rate.optional(),
  driftRate: rate.optional(),
  doubleEditRate: rate.optional(),
});

/** The roughness in effect. */
export interface Roughness {
  /**
   * 'second': last_updated is written to the whole second, so a second edit within the same
   * clock second leaves it unchanged (the real service). 'strict': every edit moves it forward.
   */
  lastUpdated: 'second' | 'strict';
  /** Chance, at each paging moment of a full-list read, that one listed record moves. */
  pagingChurnRate: number;
  /** Share of requests whose records differ from the documented shape. */
  driftRate: number;
  /** Chance that a driver edit is followed by a second edit of the request in the same instant. */
  doubleEditRate: number;
}

/** The defaults: at least as rough as the real service. */
export const DEFAULT_ROUGHNESS: Readonly<Roughness> = Object.freeze({
  lastUpdated: 'second',
  pagingChurnRate: 0.3,
  driftRate: 0.1,
  doubleEditRate: 0.3,
});

/** `current` with the members `next` sets; throws a ZodError on invalid settings. */
export function mergeRoughness(current: Roughness, next: Partial<Roughness>): Roughness {
  const parsed = roughnessSchema.parse(next);
  // An explicit undefined leaves a setting as it is, as an absent member does.
  const set = Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== undefined));
  return { ...current, ...set };
}
