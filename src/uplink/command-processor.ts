import type { Statement } from 'better-sqlite3';
import type { ApiKeys } from '../auth/api-keys.js';
import { FleetChangeError, type FleetChanges, type MoneyMoved } from '../fleet/fleet-changes.js';
import type { Roster } from '../fleet/roster.js';
import type { TokenChanges } from '../fleet/token-changes.js';
import type { Telematics } from '../fleet/telematics.js';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/database.js';
import type { Outbox } from '../store/outbox.js';
import { parseCommand, type Command } from './commands.js';

export type ReplyStatus = 'applied' | 'duplicate' | 'rejected';

export interface CommandReply {
  type: 'command_reply';
  commandId: string | null;
  commandType: string | null;
  status: ReplyStatus;
  /** For rejected: a code (`invalid_command`, `driver_not_found`, …) and a message. */
  reason?: string;
  message?: string;
  /** For applied and duplicate: what the command did (the first time). */
  result?: Record<string, unknown>;
  at: string;
}

/** A command that is well-formed but cannot be applied; nothing it did is kept. */
class Rejection extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CommandDeps {
  db: Db;
  clock: Clock;
  outbox: Outbox;
  roster: Roster;
  fleetChanges: FleetChanges;
  tokenChanges: TokenChanges;
  apiKeys: ApiKeys;
  telematics: Telematics;
}

/**
 * Applies commands from the fleet's cloud exactly once in effect: the effect, the command's id in
 * `uplink_commands` and the reply in the outbox are one SQLite transaction, so a redelivered
 * command (same id) finds its id and changes nothing but get a `duplicate` reply. A rejected
 * command changes nothing but its reply. Every reply goes through the outbox (at least once, in
 * order with the ledger entries it caused).
 */
export class CommandProcessor {
  private readonly appliedStmt: Statement<[string], { type: string; result: string }>;
  private readonly recordStmt: Statement<[string, string, string, string]>;

  constructor(private readonly d: CommandDeps) {
    this.appliedStmt = d.db.prepare('SELECT type, result FROM uplink_commands WHERE id = ?');
    this.recordStmt = d.db.prepare(
      'INSERT INTO uplink_commands (id, type, result, applied_at) VALUES (?, ?, ?, ?)',
    );
  }

  handle(raw: Buffer): CommandReply {
    const at = new Date(this.d.clock.now()).toISOString();
    const parsed = parseCommand(raw);
    if (!parsed.ok) {
      return this.reply({
        type: 'command_reply',
        commandId: parsed.id,
        commandType: parsed.type,
        status: 'rejected',
        reason: parsed.reason,
        message: parsed.message,
        at,
      });
    }
    const command = parsed.command;
    const base = {
      type: 'command_reply' as const,
      commandId: command.id,
      commandType: command.type,
    };
    try {
      return this.d.db.transaction((): CommandReply => {
        const seen = this.appliedStmt.get(command.id);
        if (seen) {
          const result = JSON.parse(seen.result) as Record<string, unknown>;
          return this.reply({ ...base, commandType: seen.type, status: 'duplicate', result, at });
        }
        const moved = this.moneyMovedBefore(command);
        if (moved) return this.reply({ ...base, status: 'duplicate', result: { ...moved }, at });
        const result = this.apply(command, at);
        this.recordStmt.run(command.id, command.type, JSON.stringify(result), at);
        return this.reply({ ...base, status: 'applied', result, at });
      })();
    } catch (err) {
      if (!(err instanceof Rejection)) throw err;
      return this.reply({
        ...base,
        status: 'rejected',
        reason: err.reason,
        message: err.message,
        at,
      });
    }
  }

  /**
   * A money command whose id retention has since pruned (retention.uplinkCommandsDays) is still
   * found by its ledger reference: without this the wallet refuses the second credit, the
   * command fails unacknowledged and the broker redelivers it on every reconnect.
   */
  private moneyMovedBefore(c: Command): MoneyMoved | null {
    if (c.type !== 'top_up' && c.type !== 'adjustment') return null;
    return this.d.fleetChanges.moneyMoved(c.driverId, `cmd:${c.id}`);
  }

  private reply(reply: CommandReply): CommandReply {
    this.d.db.transaction(() => this.d.outbox.enqueue('replies', { ...reply }, reply.at))();
    return reply;
  }

  private apply(c: Command, at: string): Record<string, unknown> {
    const changes = this.d.fleetChanges;
    try {
      switch (c.type) {
        case 'top_up':
          return { ...changes.moveMoney(c.driverId, 'top_up', c.amount, `cmd:${c.id}`, at) };
        case 'adjustment':
          return {
            ...changes.moveMoney(c.driverId, 'adjustment', c.amount, `cmd:${c.id}`, at, {
              actor: `uplink:${c.id}`,
              reason: c.reason,
            }),
          };
        case 'fleet_upsert':
          return changes.upsertFleet(c.fleetId, c.name, at);
        case 'driver_upsert':
          return changes.upsertDriver(c, at);
        case 'driver_deactivate':
          return changes.deactivateDriver(c.driverId, at);
        case 'vehicle_assign':
          return changes.assignVehicle(c.driverId, c.vehicle, at);
        case 'api_key_rotate':
          return this.rotateKeys(c, at);
        case 'token_bind':
        case 'token_unbind':
        case 'token_block':
        case 'token_unblock':
          return this.tokenCommand(c, at);
        case 'telematics_soc':
          changes.driver(c.driverId);
          return { stored: this.d.telematics.record(c.driverId, c.socPercent, c.measuredAt, at) };
      }
    } catch (err) {
      if (err instanceof FleetChangeError) throw new Rejection(err.code, err.message);
      throw err;
    }
  }

  /**
   * The cloud's roster of cards and vehicles (docs/driver-tokens.md): the system of record when it
   * speaks, so a bind moves a token bound to another driver, and an unbind of a token not bound
   * is applied with nothing changed (the state it asks for holds). Replies name the token masked.
   */
  private tokenCommand(
    c: Extract<Command, { type: `token_${string}` }>,
    at: string,
  ): Record<string, unknown> {
    const tokens = this.d.tokenChanges;
    if (c.type === 'token_bind') {
      const { token, created, changed, movedFrom } = tokens.bind(
        {
          driverId: c.driverId,
          kind: c.kind,
          type: c.tokenType,
          value: c.value,
          label: c.label,
          expiresAt: c.expiresAt,
        },
        'cloud',
        at,
      );
      return { tokenId: token.id, masked: token.masked, created, changed, movedFrom };
    }
    const token = tokens.boundByValue(c.value, c.driverId);
    if (!token) {
      if (c.type === 'token_unbind') return { tokenId: null, changed: false };
      throw new Rejection('token_not_found', 'no driver holds that token');
    }
    const outcome =
      c.type === 'token_unbind'
        ? tokens.unbind(token, at)
        : tokens.setBlocked(
            token,
            c.type === 'token_block' ? { reason: c.reason, source: 'cloud' } : null,
            at,
          );
    return { tokenId: token.id, masked: token.masked, driverId: token.driverId, ...outcome };
  }

  private rotateKeys(
    c: Extract<Command, { type: 'api_key_rotate' }>,
    at: string,
  ): Record<string, unknown> {
    if (!this.d.roster.hasFleet(c.fleetId))
      throw new Rejection('fleet_not_found', `no fleet with id ${c.fleetId}`);
    let added = false;
    if (c.addKeyHash !== undefined) {
      const owner = this.d.apiKeys.ownerOfHash(c.addKeyHash);
      if (owner !== undefined && owner !== c.fleetId)
        throw new Rejection('api_key_taken', 'that key is registered to another fleet');
      added = this.d.apiKeys.registerHash(c.fleetId, c.addKeyHash, c.label ?? 'uplink', at);
    }
    const revokeAtMs = this.d.clock.now() + (c.revokeAfterSeconds ?? 0) * 1000;
    for (const hash of c.revokeKeyHashes ?? []) {
      if (hash === c.addKeyHash)
        throw new Rejection('invalid_command', 'a key cannot be added and revoked at once');
      if (this.d.apiKeys.ownerOfHash(hash) !== c.fleetId)
        throw new Rejection('api_key_not_found', `fleet ${c.fleetId} has no such key to revoke`);
      this.d.apiKeys.revokeHash(hash, revokeAtMs, at);
    }
    return {
      added,
      revoked: c.revokeKeyHashes?.length ?? 0,
      revokeAt: c.revokeKeyHashes?.length ? new Date(revokeAtMs).toISOString() : null,
    };
  }
}
