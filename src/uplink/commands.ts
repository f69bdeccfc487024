import { z } from 'zod';
import { ID_TOKEN_TYPES } from '../id-tokens/id-token-store.js';
import {
  MAX_BLOCK_REASON_LENGTH,
  MAX_TOKEN_LABEL_LENGTH,
  tokenValueSchema,
} from '../id-tokens/token-input.js';

/**
 * Commands from the fleet's cloud on `<prefix>commands`, validated here as they arrive. Every
 * command has an `id` (the cloud's idempotency key) and a `type`; unknown fields are refused.
 * schemas/mqtt/command.json is the same contract as JSON Schema.
 */
const commandId = z.string().min(1).max(128);
const entityId = z.string().min(1).max(64);
const money = z.number().int().min(1).max(100_000_000);
const vehicle = z
  .object({ model: z.string().min(1).max(100), batteryKwh: z.number().positive().max(1000) })
  .strict();
/** A card's or vehicle's token as the cloud sends it: checked by the operator API's own rule. */
const tokenValue = tokenValueSchema;
/** The cloud names the driver when it means "this driver's token": another's is refused. */
const tokenTarget = { value: tokenValue, driverId: entityId.optional() };
const keyHash = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256 of the API key');

export const commandSchema = z.discriminatedUnion('type', [
  z
    .object({
      id: commandId,
      type: z.literal('top_up'),
      driverId: entityId,
      amount: money,
    })
    .strict(),
  z
    .object({
      id: commandId,
      type: z.literal('adjustment'),
      driverId: entityId,
      /** Whole NGN, credit (> 0) or debit (< 0); a debit never takes the balance below zero. */
      amount: z
        .number()
        .int()
        .min(-100_000_000)
        .max(100_000_000)
        .refine((n) => n !== 0, 'must not be 0'),
      reason: z.string().min(1).max(200),
    })
    .strict(),
  z
    .object({
      id: commandId,
      type: z.literal('fleet_upsert'),
      fleetId: entityId,
      name: z.string().min(1).max(200),
    })
    .strict(),
  z
    .object({
      id: commandId,
      type: z.literal('driver_upsert'),
      driverId: entityId,
      fleetId: entityId,
      email: z
        .string()
        .trim()
        .min(3)
        .max(254)
        .regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address'),
      /** Left out: true for a new driver, unchanged for an existing one. */
      active: z.boolean().optional(),
      /** Left out: none for a new driver, unchanged for an existing one; null removes it. */
      vehicle: vehicle.nullable().optional(),
    })
    .strict(),
  z.object({ id: commandId, type: z.literal('driver_deactivate'), driverId: entityId }).strict(),
  z
    .object({
      id: commandId,
      type: z.literal('vehicle_assign'),
      driverId: entityId,
      vehicle: vehicle.nullable(),
    })
    .strict(),
  z
    .object({
      id: commandId,
      type: z.literal('api_key_rotate'),
      fleetId: entityId,
      /** SHA-256 (hex) of the new key: the key itself never travels over MQTT. */
      addKeyHash: keyHash.optional(),
      label: z.string().max(100).optional(),
      revokeKeyHashes: z.array(keyHash).max(20).optional(),
      /** The old keys keep working this long (overlap for the fleet's backends to switch). */
      revokeAfterSeconds: z
        .number()
        .int()
        .min(0)
        .max(30 * 86_400)
        .optional(),
    })
    .strict()
    .refine((c) => c.addKeyHash !== undefined || (c.revokeKeyHashes?.length ?? 0) > 0, {
      message: 'adds or revokes at least one key',
    }),
  z
    .object({
      id: commandId,
      type: z.literal('token_bind'),
      driverId: entityId,
      kind: z.enum(['card', 'vehicle']),
      tokenType: z.enum(ID_TOKEN_TYPES),
      value: tokenValue,
      /** Left out: empty for a new token, unchanged for a bound one. */
      label: z.string().max(MAX_TOKEN_LABEL_LENGTH).optional(),
      /** Left out: none for a new token, unchanged for a bound one; null removes it. */
      expiresAt: z.iso.datetime({ offset: false }).nullable().optional(),
    })
    .strict(),
  z.object({ id: commandId, type: z.literal('token_unbind'), ...tokenTarget }).strict(),
  z
    .object({
      id: commandId,
      type: z.literal('token_block'),
      ...tokenTarget,
      reason: z.string().min(1).max(MAX_BLOCK_REASON_LENGTH).optional(),
    })
    .strict(),
  z.object({ id: commandId, type: z.literal('token_unblock'), ...tokenTarget }).strict(),
  z
    .object({
      id: commandId,
      type: z.literal('telematics_soc'),
      driverId: entityId,
      socPercent: z.number().min(0).max(100),
      measuredAt: z.iso.datetime({ offset: false }),
    })
    .strict(),
]);

export type Command = z.output<typeof commandSchema>;
export type CommandType = Command['type'];

export type Parsed =
  | { ok: true; command: Command }
  | { ok: false; id: string | null; type: string | null; reason: string; message: string };

/** Largest command accepted (bytes); larger ones are rejected unread. */
export const MAX_COMMAND_BYTES = 16_384;

export function parseCommand(raw: Buffer): Parsed {
  if (raw.length > MAX_COMMAND_BYTES) {
    return {
      ok: false,
      id: null,
      type: null,
      reason: 'too_large',
      message: `command is ${raw.length} bytes; at most ${MAX_COMMAND_BYTES}`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, id: null, type: null, reason: 'invalid_json', message: 'not JSON' };
  }
  const result = commandSchema.safeParse(json);
  if (result.success) return { ok: true, command: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(top level)';
  const o = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  return {
    ok: false,
    id: typeof o.id === 'string' && o.id.length <= 128 ? o.id : null,
    type: typeof o.type === 'string' && o.type.length <= 64 ? o.type : null,
    reason: 'invalid_command',
    message: `${where}: ${issue?.message ?? 'invalid'}`,
  };
}
