import {
  type BoundToken,
  type IdTokenKind,
  type IdTokenSource,
  type IdTokenStore,
  type IdTokenType,
} from '../id-tokens/id-token-store.js';
import { FleetChangeError } from './fleet-changes.js';
import type { Roster } from './roster.js';

export interface TokenBinding {
  driverId: string;
  kind: IdTokenKind;
  type: IdTokenType;
  /** As typed or sent; validated at the edge (id-tokens/token-input.ts). */
  value: string;
  /** Left out: empty for a new token, unchanged for a bound one. */
  label?: string | undefined;
  /** Left out: none for a new token, unchanged for a bound one; null removes it. */
  expiresAt?: string | null | undefined;
}

export interface TokenBound {
  token: BoundToken;
  created: boolean;
  changed: boolean;
  /** The driver the cloud moved the token from (never an operator's binding). */
  movedFrom: string | null;
}

/** What a token shows in answers and replies: never its value or key, only the mask. */
export type TokenState = 'active' | 'blocked' | 'expired';

export function tokenState(token: BoundToken, nowMs: number): TokenState {
  if (token.blockedAt !== null) return 'blocked';
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= nowMs) return 'expired';
  return 'active';
}

const DEFAULT_BLOCK_REASON: Record<IdTokenSource, string> = {
  operator: 'blocked by the site operator',
  cloud: 'blocked by the fleet',
};

function sameBinding(a: BoundToken, b: BoundToken): boolean {
  return (
    a.kind === b.kind &&
    a.type === b.type &&
    a.value === b.value &&
    a.label === b.label &&
    a.expiresAt === b.expiresAt &&
    a.source === b.source
  );
}

/**
 * Binding, blocking and unbinding drivers' tokens, with one set of rules for the site's operator
 * (operator API, CLI, console) and the fleet's cloud (MQTT roster), inside the caller's
 * transaction. The difference between them is written in docs/driver-tokens.md: an operator is
 * refused a token bound to another driver (409), the cloud, the system of record when it speaks,
 * moves it (unbind and bind in the caller's one transaction).
 */
export class TokenChanges {
  constructor(
    private readonly roster: Roster,
    private readonly tokens: IdTokenStore,
  ) {}

  private driver(driverId: string): void {
    if (!this.roster.driver(driverId))
      throw new FleetChangeError('driver_not_found', `no driver with id ${driverId}`);
  }

  ofDriver(driverId: string): BoundToken[] {
    this.driver(driverId);
    return this.tokens.ofDriver(driverId);
  }

  /** The bound token a charger would recognise in this form (any form of it: its key). */
  find(value: string): BoundToken | undefined {
    return this.tokens.find(value);
  }

  /** The driver's bound token with this id (404 otherwise, whoever else holds it). */
  tokenOf(driverId: string, tokenId: string): BoundToken {
    this.driver(driverId);
    const token = this.tokens.get(tokenId);
    if (!token || token.driverId !== driverId || token.unboundAt !== null) {
      throw new FleetChangeError('token_not_found', `driver ${driverId} has no token ${tokenId}`);
    }
    return token;
  }

  /** Binds (or updates, bound to the same driver: idempotent) a token. */
  bind(input: TokenBinding, source: IdTokenSource, at: string): TokenBound {
    this.driver(input.driverId);
    const before = this.tokens.find(input.value);
    let movedFrom: string | null = null;
    if (before && before.driverId !== input.driverId) {
      if (source === 'operator') {
        throw new FleetChangeError(
          'token_bound_elsewhere',
          `token ${before.masked} is bound to driver ${before.driverId}: unbind it there first`,
        );
      }
      this.tokens.unbind(before.id, at);
      movedFrom = before.driverId;
    }
    const kept = movedFrom === null ? before : undefined;
    const token = this.tokens.bind({ ...input, source }, at);
    return {
      token,
      created: kept === undefined,
      changed: kept === undefined || !sameBinding(kept, token),
      movedFrom,
    };
  }

  /** Blocks (reason given, or the source's default) or unblocks (null) the token. */
  setBlocked(
    token: BoundToken,
    block: { reason: string | undefined; source: IdTokenSource } | null,
    at: string,
  ): { changed: boolean } {
    const reason = block === null ? null : (block.reason ?? DEFAULT_BLOCK_REASON[block.source]);
    if (token.blockedReason === reason) return { changed: false };
    this.tokens.setBlocked(token.id, reason, at);
    return { changed: true };
  }

  unbind(token: BoundToken, at: string): { changed: boolean } {
    return { changed: this.tokens.unbind(token.id, at) };
  }

  /**
   * The cloud's form: the bound token with this value, when `driverId` (if named) holds it;
   * a token bound to another driver than the one named is refused, never acted on.
   */
  boundByValue(value: string, driverId: string | undefined): BoundToken | undefined {
    if (driverId !== undefined) this.driver(driverId);
    const token = this.tokens.find(value);
    if (token && driverId !== undefined && token.driverId !== driverId) {
      throw new FleetChangeError(
        'token_bound_elsewhere',
        `token ${token.masked} is bound to another driver than ${driverId}`,
      );
    }
    return token;
  }
}
