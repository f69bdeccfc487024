import { z } from 'zod';
import type { CircuitConfig } from '../config/schema.js';
import { allCircuits, SITE_NODE } from './limits.js';
import { WEEKDAYS } from '../shared/local-time.js';

/** Config pieces of the run-time limit sources; schema.ts places them under `site`. */

export const hhmm = z
  .string()
  .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'a local time HH:MM (00:00-23:59)');
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

/**
 * What zod cannot see alone: a schedule window names a node of the power tree, and the feed
 * needs the uplink's broker (it is read on that connection). The problem, or undefined.
 */
export function powerInputsProblem(config: {
  power?:
    | { schedule: { node?: string | undefined }[]; feed?: unknown; circuits: CircuitConfig[] }
    | undefined;
  uplink: { url?: string | undefined };
}): string | undefined {
  const power = config.power;
  if (!power) return undefined;
  const ids = new Set([SITE_NODE, ...allCircuits(power.circuits).map((c) => c.id)]);
  for (const [i, w] of power.schedule.entries()) {
    if (w.node !== undefined && !ids.has(w.node))
      return `config key power.schedule.${i}.node: no site or circuit ${w.node}`;
  }
  if (power.feed !== undefined && config.uplink.url === undefined)
    return 'config key power.feed: the feed is read on the uplink: set uplink.url';
  return undefined;
}
