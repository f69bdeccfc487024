import { z } from 'zod';
import type { Logger } from '../shared/log.js';
import type { LimitBoard } from './limit-board.js';
import { kwToWatts } from './schedule.js';

/** The longest a single feed message may declare itself valid. */
export const MAX_VALID_FOR_SECONDS = 86_400;

/** What the cloud or a site meter publishes to site.power.feed.topic. */
export const feedPayloadSchema = z
  .object({
    limitKw: z.number().min(0).max(1_000_000),
    /** The node it limits; the site when absent. */
    node: z.string().min(1).max(64).optional(),
    /** How long this value holds; feed.staleAfterSeconds when absent. */
    validForSeconds: z.number().positive().max(MAX_VALID_FOR_SECONDS).optional(),
  })
  .strict();

export type FeedRejection = 'not_json' | 'invalid' | 'unknown_node' | 'retained';

export interface FeedStats {
  accepted: number;
  rejected: Record<FeedRejection, number>;
  lastAcceptedAtMs: number | null;
}

/**
 * The MQTT limit feed's edge: each message is parsed and validated once here, and only a valid
 * one reaches the board. A retained message is never applied: its age is unknown (the meter that
 * published it may have died hours ago), so the fallback holds until a live value arrives.
 */
export class LimitFeed {
  private readonly counts: FeedStats = {
    accepted: 0,
    rejected: { not_json: 0, invalid: 0, unknown_node: 0, retained: 0 },
    lastAcceptedAtMs: null,
  };

  constructor(
    private readonly o: {
      topic: string;
      board: LimitBoard;
      siteNodeId: string;
      staleAfterMs: number;
      now: () => number;
      log: Logger;
    },
  ) {}

  get topic(): string {
    return this.o.topic;
  }

  stats(): FeedStats {
    return { ...this.counts, rejected: { ...this.counts.rejected } };
  }

  handle(payload: Buffer, retained: boolean): void {
    if (retained) return this.reject('retained', 'a retained value has no age: ignored');
    let json: unknown;
    try {
      json = JSON.parse(payload.toString('utf8'));
    } catch {
      return this.reject('not_json', 'not JSON', payload.byteLength);
    }
    const parsed = feedPayloadSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return this.reject('invalid', `${issue?.path.join('.') || 'payload'}: ${issue?.message}`);
    }
    const nodeId = parsed.data.node ?? this.o.siteNodeId;
    if (!this.o.board.knows(nodeId)) return this.reject('unknown_node', `unknown node ${nodeId}`);
    const validForMs =
      parsed.data.validForSeconds === undefined
        ? this.o.staleAfterMs
        : parsed.data.validForSeconds * 1000;
    this.counts.accepted++;
    this.counts.lastAcceptedAtMs = this.o.now();
    this.o.board.feedValue(nodeId, kwToWatts(parsed.data.limitKw), validForMs);
  }

  private reject(why: FeedRejection, detail: string, bytes?: number): void {
    this.counts.rejected[why]++;
    this.o.log.warn(
      { topic: this.o.topic, rejected: why, detail, bytes, count: this.counts.rejected[why] },
      'power limit feed message not applied',
    );
  }
}
