import type { TransactionEventType } from './messages.js';

/**
 * How a 2.0.1 (or 2.1) TransactionEvent is kept in `ocpp201_transaction_events` (migration 032):
 * a compact row, so that a 1 KiB leaf holds about three times as many events as when the times,
 * type and trigger were text. Every reader gets the text back through `eventOfRow`.
 *
 * Both code tables are append-only: a code never changes meaning, since rows keep it for as long
 * as retention does. test/ocpp201-event-row.test.ts pins them, and the table's CHECKs bound them.
 */
export const EVENT_TYPES: readonly TransactionEventType[] = ['Started', 'Updated', 'Ended'];

/** 2.0.1's TriggerReasonEnumType in its schema's order, then what 2.1's adds. */
export const TRIGGER_REASONS: readonly string[] = [
  'Authorized',
  'CablePluggedIn',
  'ChargingRateChanged',
  'ChargingStateChanged',
  'Deauthorized',
  'EnergyLimitReached',
  'EVCommunicationLost',
  'EVConnectTimeout',
  'MeterValueClock',
  'MeterValuePeriodic',
  'TimeLimitReached',
  'Trigger',
  'UnlockCommand',
  'StopAuthorized',
  'EVDeparted',
  'EVDetected',
  'RemoteStop',
  'RemoteStart',
  'AbnormalCondition',
  'SignedDataReceived',
  'ResetCommand',
  // 2.1
  'CostLimitReached',
  'LimitSet',
  'OperationModeChanged',
  'RunningCost',
  'SoCLimitReached',
  'TariffChanged',
  'TariffNotAccepted',
  'TxResumed',
];

const TYPE_CODE = new Map(EVENT_TYPES.map((t, i) => [t, i]));
const TRIGGER_CODE = new Map(TRIGGER_REASONS.map((t, i) => [t, i]));

/**
 * A time as kept: its instant in ms, and its text only when the instant does not spell it back
 * exactly (a spelling other than `toISOString`'s, or no instant at all). The edge rewrites every
 * parseable timestamp as `toISOString` spells it (connection/tolerant.ts), so in practice the text
 * is only ever kept for rows written before that, or for a value that does not parse.
 */
export interface KeptTime {
  ms: number | null;
  text: string | null;
}

// Spelled here with toISOString, not the clock's isoAt: a charger's time would evict the instant
// isoAt remembers for the group commit's samples.
const spell = (ms: number): string => new Date(ms).toISOString();

export function keptTime(text: string): KeptTime {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return { ms: null, text };
  return { ms, text: spell(ms) === text ? null : text };
}

export function spelledTime(t: KeptTime): string {
  return t.text ?? spell(t.ms as number);
}

/**
 * The same instant: compared in ms when both parse, so the same event re-sent with its time
 * spelled another way is the same event; as text when either does not.
 */
export function sameTime(a: KeptTime, b: KeptTime): boolean {
  return a.ms !== null && b.ms !== null ? a.ms === b.ms : spelledTime(a) === spelledTime(b);
}

/** The stored columns, in the insert's order after (tx_key, seq_no). */
export type EventColumns = [
  typeCode: number,
  triggerCode: number | null,
  triggerText: string | null,
  offline: 0 | 1,
  timestampMs: number | null,
  timestampText: string | null,
  receivedAtMs: number,
];

export function typeCodeOf(eventType: TransactionEventType): number {
  const code = TYPE_CODE.get(eventType);
  // The edge refuses any other type before a handler sees it (schema enum, no "Other").
  if (code === undefined) throw new Error(`not a TransactionEvent type: ${String(eventType)}`);
  return code;
}

/**
 * A trigger reason outside the table (a charger's own text that reached us) is kept as it came,
 * in its own column, rather than refused or folded into a code: the event must be recorded, and
 * the text is what a reader of the session wants to see.
 */
export function eventColumns(
  eventType: TransactionEventType,
  triggerReason: string,
  offline: boolean,
  timestamp: string,
  receivedAtMs: number,
): EventColumns {
  const trigger = TRIGGER_CODE.get(triggerReason);
  const time = keptTime(timestamp);
  return [
    typeCodeOf(eventType),
    trigger ?? null,
    trigger === undefined ? triggerReason : null,
    offline ? 1 : 0,
    time.ms,
    time.text,
    receivedAtMs,
  ];
}

/**
 * A transaction's events, found without an index (migrations/034): those of its key among the
 * events heard while it ran, its span of ids (first, last or NULL for the table's end), given
 * before the key.
 */
export const TX_EVENT_SPAN = `event_id BETWEEN ? AND coalesce(?, 9223372036854775807)
  AND tx_key = ?`;

/** A transaction's events by seqNo, as `eventOfRow` reads them back; takes TX_EVENT_SPAN's. */
export const EVENTS_OF_TRANSACTION = `SELECT seq_no, type_code, trigger_code, trigger_text, offline,
    timestamp_ms, timestamp_text, received_at_ms
  FROM ocpp201_transaction_events WHERE ${TX_EVENT_SPAN} ORDER BY seq_no, event_id`;

export interface EventRow {
  seq_no: number;
  type_code: number;
  trigger_code: number | null;
  trigger_text: string | null;
  offline: number;
  timestamp_ms: number | null;
  timestamp_text: string | null;
  received_at_ms: number;
}

/** An event as the operator API has always shown it: its times as ISO text, its names as text. */
export interface TransactionEvent201 {
  seqNo: number;
  eventType: TransactionEventType;
  triggerReason: string;
  offline: boolean;
  timestamp: string;
  receivedAt: string;
}

export function eventOfRow(row: EventRow): TransactionEvent201 {
  return {
    seqNo: row.seq_no,
    eventType: EVENT_TYPES[row.type_code] as TransactionEventType,
    triggerReason: row.trigger_text ?? (TRIGGER_REASONS[row.trigger_code as number] as string),
    offline: row.offline === 1,
    timestamp: spelledTime({ ms: row.timestamp_ms, text: row.timestamp_text }),
    receivedAt: spell(row.received_at_ms),
  };
}
