import { z } from 'zod';
import { WEEKDAYS } from '../shared/local-time.js';
import { hhmm } from '../shared/time-of-day.js';

/**
 * Config pieces of site power's run-time limit sources; schema.ts places them under `site`. What
 * zod cannot check (a window's node exists) is power/limit-inputs-config.ts.
 */

const kw = z.number().min(0).max(1_000_000);

export const scheduleWindowSchema = z
  .object({
    /** The node it limits (a circuit id); the site when absent. */
    node: z.string().min(1).max(64).optional(),
    /** The days on which the window starts; one over midnight ends the next day. */
    days: z.array(z.enum(WEEKDAYS)).min(1).max(7),
    from: hhmm,
    /** Earlier than `from`: the next day; equal to it: a whole day. */
    to: hhmm,
    limitKw: kw,
  })
  .strict();

export const powerFeedSchema = z
  .object({
    /** MQTT topic on the uplink's broker (no wildcards). */
    topic: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^+#\s]+$/, 'a topic without wildcards or whitespace'),
    /** A value older than this (and past its own validForSeconds) is stale. */
    staleAfterSeconds: z.number().positive().max(86_400).default(60),
    /** The site's limit while the feed is stale; default: the lowest schedule value, else half the contract. */
    fallbackKw: kw.optional(),
  })
  .strict();

/** site.power's run-time pieces. */
export const powerInputsShape = {
  schedule: z.array(scheduleWindowSchema).max(200).default([]),
  feed: powerFeedSchema.optional(),
};
