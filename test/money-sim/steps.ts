import fc from 'fast-check';
import { vi } from 'vitest';
import type { JsonResponse } from '../helpers/http.js';
import { ENCODINGS, type ChargerMsg } from './frames.js';
import { checkInvariants } from './invariants.js';
import {
  CHARGER_KEYS,
  CONNECTORS,
  DRIVER_KEYS,
  PRICE,
  paidWh,
  type ChargerKey,
  type ConnectorKey,
  type DriverKey,
  type ModelSession,
  type StartVerdict,
} from './model.js';
import type { PendingStart } from './sim-charger.js';
import {
  quiesce,
  CALL_TIMEOUT_SECONDS,
  START_TIMEOUT_SECONDS,
  STOP_GRACE_SECONDS,
  until,
  within,
  type World,
} from './world.js';

/**
 * The steps a simulation run is made of. Each one does one thing to the real system, waits until
 * the gateway has finished reacting (every reply, every response it causes), updates the model
 * and checks every invariant, so the order of events comes only from the seeded generator.
 */
type Step = fc.AsyncCommand<World, World>;

const STATUS_OF: Record<Exclude<StartVerdict, 'ok'>, [number, string]> = {
  token_expired: [401, 'token_expired'],
  charger_offline: [503, 'charger_offline'],
  connector_unavailable: [409, 'connector_unavailable'],
  insufficient_balance: [402, 'insufficient_balance'],
};

function fail(what: string, res: JsonResponse): never {
  throw new Error(`${what}: got ${res.status} ${JSON.stringify(res.body)}`);
}

function expectError(res: JsonResponse, verdict: Exclude<StartVerdict, 'ok'>, what: string): void {
  const [status, code] = STATUS_OF[verdict];
  const body = res.body as { error?: { code?: string } } | null;
  if (res.status !== status || body?.error?.code !== code)
    fail(`${what}: expected ${status} ${code}`, res);
}

const connectorName = (c: ConnectorKey) => `${c.charger}/${c.connectorId}`;

/** Shared by every step: trace, act, let the gateway settle, check the invariants. */
abstract class SimStep implements Step {
  abstract check(w: Readonly<World>): boolean;
  protected abstract act(w: World): Promise<void>;
  abstract toString(): string;

  async run(w: World): Promise<void> {
    w.trace.push(this.toString());
    await this.act(w);
    await quiesce();
    checkInvariants(w, w.seen);
    w.stats.set(this.constructor.name, (w.stats.get(this.constructor.name) ?? 0) + 1);
  }
}

export class Mint extends SimStep {
  constructor(readonly driver: DriverKey) {
    super();
  }
  check() {
    return true;
  }
  toString() {
    return `mint(${this.driver})`;
  }
  protected async act(w: World) {
    const res = await within(w.mint(this.driver), 'mint');
    if (res.status !== 200) fail('mint', res);
    const body = res.body as { token: string; expiresAt: string };
    w.model.tokens[this.driver] = { token: body.token, expiresAtMs: Date.parse(body.expiresAt) };
  }
}

export class Quote extends SimStep {
  constructor(
    readonly driver: DriverKey,
    readonly c: ConnectorKey,
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.model.tokens[this.driver] !== null;
  }
  toString() {
    return `quote(${this.driver}, ${connectorName(this.c)})`;
  }
  protected async act(w: World) {
    const token = w.model.tokens[this.driver]?.token as string;
    const verdict = w.model.precheck(this.driver, this.c, w.now());
    const res = await within(w.quote(this.driver, this.c, token), 'quote');
    if (verdict !== 'ok') return expectError(res, verdict, this.toString());
    const body = res.body as { subWalletBalance?: number };
    if (res.status !== 200 || body.subWalletBalance !== w.model.balances[this.driver]) {
      fail(`${this.toString()}: expected 200 with balance ${w.model.balances[this.driver]}`, res);
    }
  }
}

/** Fixed amounts and amounts relative to the balance (exactly all of it, one naira more). */
const AMOUNTS = [1, 40, 700, 2_999, 3_000, 12_000, 45_000, 'all', 'all+1'] as const;

/**
 * Issue 4 part 1 adds an Idempotency-Key header to Start; a RetryStart step (the same key and
 * body again after a lost response, a dropped link or a restart: one debit, the first response)
 * belongs beside this one, passing the key through World.start's `headers`.
 */
export class Start extends SimStep {
  constructor(
    readonly driver: DriverKey,
    readonly c: ConnectorKey,
    readonly amountChoice: (typeof AMOUNTS)[number],
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.model.tokens[this.driver] !== null;
  }
  toString() {
    return `start(${this.driver}, ${connectorName(this.c)}, ${this.amountChoice})`;
  }

  protected async act(w: World) {
    const { model } = w;
    const balance = model.balances[this.driver];
    const amount =
      this.amountChoice === 'all'
        ? Math.max(1, balance)
        : this.amountChoice === 'all+1'
          ? balance + 1
          : this.amountChoice;
    const token = model.tokens[this.driver]?.token as string;
    const verdict = model.startVerdict(this.driver, this.c, amount, w.now());
    // OCPP-J allows one outstanding call per direction: behind an unanswered remote start on the
    // same charger, this one waits in the gateway's queue (debited, not yet sent).
    const queued = model.sessions.some(
      (s) => s.response !== null && s.connector.charger === this.c.charger,
    );
    const known = new Set(model.sessions.map((s) => s.id));
    let res: JsonResponse | null = null;
    const idemKey = `sim-${w.trace.length}`;
    const response = w.start(this.driver, this.c, token, amount, { 'idempotency-key': idemKey });
    // Kept for a later step; a rejection is looked at there, never left unhandled.
    response.then((r) => (res = r)).catch(() => undefined);
    if (verdict !== 'ok') {
      return expectError(await within(response, 'start response'), verdict, this.toString());
    }
    const newRow = () =>
      (
        w.db
          .prepare(
            "SELECT id, amount, id_token, created_at FROM sessions WHERE state = 'authorizing' AND charger_id = ? AND connector_id = ?",
          )
          .all(this.c.charger, this.c.connectorId) as {
          id: string;
          amount: number;
          id_token: string;
          created_at: string;
        }[]
      ).find((r) => !known.has(r.id));
    await until(() => res !== null || newRow() !== undefined, 'start: the debit');
    const row = newRow();
    if (!row)
      return fail(
        `${this.toString()}: expected a debit and a remote start`,
        res as unknown as JsonResponse,
      );
    if (row.amount !== amount)
      throw new Error(`session ${row.id} debited ${row.amount}, asked ${amount}`);
    model.balances[this.driver] -= amount;
    const micro = PRICE[this.c.charger];
    const session: ModelSession = {
      n: model.sessions.length,
      id: row.id,
      idToken: row.id_token,
      driver: this.driver,
      connector: this.c,
      amount,
      micro,
      limitWh: paidWh(amount, micro),
      phase: 'pending',
      createdAtMs: Date.parse(row.created_at),
      authorizedAtMs: null,
      balanceAfterDebit: model.balances[this.driver],
      response,
      transactionRef: null,
      meterStart: null,
      startSampled: false,
      track: null,
      rebooted: false,
      seenInUse: false,
      graceAtMs: null,
      idemKey,
      refundCode: null,
      held: null,
      trueWh: null,
      settled: null,
    };
    model.sessions.push(session);
    if (!queued) await remoteStartArrives(w, session);
  }
}

/**
 * A Start sent again with the Idempotency-Key of an earlier one (a lost response, a restart): no
 * second debit; the first attempt's outcome as it stands (200 once the charger accepted or
 * started it, 409 in progress while it waits for the charger, its failure after a refund); the
 * same key with another amount is a different request (422).
 */
export class RetryStart extends SimStep {
  constructor(
    readonly pick: number,
    readonly changed: boolean,
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.model.sessions.length > 0;
  }
  toString() {
    return `retryStart(${this.pick}${this.changed ? ', other amount' : ''})`;
  }
  protected async act(w: World) {
    const { model } = w;
    const s = model.sessions[
      model.sessions.length - 1 - (this.pick % model.sessions.length)
    ] as ModelSession;
    const token = model.tokens[s.driver]?.token as string;
    const res = await within(
      w.start(s.driver, s.connector, token, s.amount + (this.changed ? 1 : 0), {
        'idempotency-key': s.idemKey,
      }),
      'retried start',
    );
    const code = (res.body as { error?: { code?: string } } | null)?.error?.code;
    const expect = (status: number, want: string) => {
      if (res.status !== status || code !== want)
        fail(`${this.toString()} of #${s.n} (${s.phase}): expected ${status} ${want}`, res);
    };
    if (model.tokenExpired(s.driver, w.now())) return expect(401, 'token_expired');
    if (this.changed) return expect(422, 'idempotency_key_reused');
    model.note(`start retried (${s.phase})`);
    if (s.authorizedAtMs !== null || s.phase === 'charging' || s.phase === 'settled')
      return expectStarted(s, res);
    if (s.phase === 'pending' || s.phase === 'orphaned')
      return expect(409, 'idempotency_key_in_progress');
    const failure = s.refundCode === 'charger_rejected' ? 'charger_rejected' : 'charger_timeout';
    expect(failure === 'charger_rejected' ? 409 : 504, failure);
  }
}

/** Waits until the charger holds the session's remote start (the gateway has sent it). */
async function remoteStartArrives(w: World, s: ModelSession): Promise<void> {
  const charger = w.chargers[s.connector.charger];
  await until(
    () => charger.pending.some((p) => p.idToken === s.idToken) || s.response === null,
    `remote start of #${s.n}`,
  );
}

/**
 * After a remote start is answered, the next one queued for the charger goes out: waits for the
 * oldest still waiting (it may have reached the charger already).
 */
async function nextQueuedStart(w: World, charger: ChargerKey): Promise<void> {
  const next = w.model.sessions.find((s) => s.response !== null && s.connector.charger === charger);
  if (next) await remoteStartArrives(w, next);
}

/** The Start response of a session whose remote start ended without the charger's Accepted. */
async function startFailed(s: ModelSession, w: World, code: string): Promise<void> {
  const res = await within(s.response as Promise<JsonResponse>, `start response of #${s.n}`);
  s.response = null;
  // A charger that started the transaction anyway (its Accepted was lost) has a paid session,
  // live or already settled.
  if (s.phase === 'charging' || s.phase === 'settled') return expectStarted(s, res);
  if (res.status !== (code === 'charger_rejected' ? 409 : 504)) fail(`start #${s.n}: ${code}`, res);
  if ((res.body as { error?: { code?: string } }).error?.code !== code) fail(`start #${s.n}`, res);
  w.model.refund(s, code);
}

function expectStarted(s: ModelSession, res: JsonResponse): void {
  const body = res.body as { sessionId?: string; debited?: number; remainingBalance?: number };
  if (
    res.status !== 200 ||
    body.sessionId !== s.id ||
    body.debited !== s.amount ||
    body.remainingBalance !== s.balanceAfterDebit
  ) {
    fail(`start #${s.n}: expected 200 ${s.id} ${s.amount} ${s.balanceAfterDebit}`, res);
  }
}

/** How a charger answers a remote start: Accepted, Rejected, or a CALLERROR. */
type Answer = 'accept' | 'reject' | 'callerror';

export class AnswerStart extends SimStep {
  constructor(
    readonly pick: number,
    readonly answer: Answer,
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return CHARGER_KEYS.some((k) => w.chargers[k].pending.length > 0);
  }
  toString() {
    return `answerStart(${this.pick}, ${this.answer})`;
  }
  protected async act(w: World) {
    const all = CHARGER_KEYS.flatMap((k) => w.chargers[k].pending);
    const p = all[this.pick % all.length] as PendingStart;
    const s = w.model.byToken(p.idToken);
    if (!s) throw new Error(`pending remote start for unknown token ${p.idToken}`);
    p.answer(
      this.answer === 'callerror'
        ? 'callerror'
        : { status: this.answer === 'accept' ? 'Accepted' : 'Rejected' },
    );
    if (this.answer !== 'accept') {
      await startFailed(s, w, 'charger_rejected');
    } else {
      const res = await within(s.response as Promise<JsonResponse>, `start response of #${s.n}`);
      s.response = null;
      expectStarted(s, res);
      if (s.phase === 'pending') {
        s.phase = 'authorized';
        s.authorizedAtMs = w.now();
      }
    }
    await nextQueuedStart(w, s.connector.charger);
  }
}

const START_KINDS = ['register', 'noRegister', 'stranger'] as const;
const CLOCKS = ['now', '1970', 'future'] as const;

function chargerTime(clock: (typeof CLOCKS)[number]): string {
  if (clock === '1970') return new Date(0).toISOString();
  return new Date(Date.now() + (clock === 'future' ? 400 * 86_400_000 : 0)).toISOString();
}

export class ChargerStart extends SimStep {
  constructor(
    readonly c: ConnectorKey,
    readonly pick: number,
    readonly kind: (typeof START_KINDS)[number],
    readonly clock: (typeof CLOCKS)[number],
  ) {
    super();
  }
  check(w: Readonly<World>) {
    const side = w.chargers[this.c.charger].connector(this.c.connectorId);
    return side.tx === null && (this.kind === 'stranger' || side.tokens.length > 0);
  }
  toString() {
    return `chargerStart(${connectorName(this.c)}, ${this.pick}, ${this.kind}, ${this.clock})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.c.charger];
    const side = charger.connector(this.c.connectorId);
    // Mostly the newest token (the session just started); sometimes an older, spent one.
    const heard =
      side.tokens[side.tokens.length - 1 - (this.pick % Math.max(1, side.tokens.length))];
    const token =
      this.kind === 'stranger' || !heard
        ? { idToken: `STRANGER${w.trace.length}`, remoteStartId: null }
        : heard;
    const tx = charger.newTx(this.c.connectorId, token.idToken, token.remoteStartId);
    side.tx = tx;
    const withRegister = this.kind !== 'noRegister' || charger.protocol === 'ocpp1.6';
    await charger.send({
      kind: 'start',
      tx,
      meterStart: withRegister ? side.register : null,
      timestamp: chargerTime(this.clock),
      seqNo: tx.seqNo++,
      offline: false,
    });
  }
}

const FLOWS = [0, 7, 150, 1_200, 9_000, 60_000] as const;
const METER_KINDS = ['flow', 'flow', 'flow', 'backwards', 'reset'] as const;

export class Meter extends SimStep {
  constructor(
    readonly c: ConnectorKey,
    readonly kind: (typeof METER_KINDS)[number],
    readonly flow: (typeof FLOWS)[number],
    readonly encoding: number,
    readonly clock: (typeof CLOCKS)[number],
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.c.charger].connector(this.c.connectorId).tx !== null;
  }
  toString() {
    return `meter(${connectorName(this.c)}, ${this.kind}${this.kind === 'flow' ? ` +${this.flow}` : ''}, enc ${this.encoding}, ${this.clock})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.c.charger];
    const side = charger.connector(this.c.connectorId);
    const tx = side.tx;
    if (!tx) return;
    let wh = side.register;
    if (this.kind === 'flow') {
      side.register += this.flow;
      tx.trueWh += this.flow;
      wh = side.register;
    } else if (this.kind === 'backwards') {
      // A glitch below a register the gateway has already seen (so it can tell); the register
      // itself does not move. Before any reading there is nothing to go back from.
      if (tx.deliveredMax !== null) wh = Math.max(0, tx.deliveredMax - 300);
    } else {
      side.register = 0; // the meter restarted with the charger's firmware
      wh = 0;
    }
    await charger.send({
      kind: 'meter',
      tx,
      wh,
      encoding: this.encoding,
      timestamp: chargerTime(this.clock),
      seqNo: tx.seqNo++,
      offline: false,
    });
  }
}

const STOP_KINDS = ['register', 'register', 'reset', 'noRegister'] as const;

export class ChargerStop extends SimStep {
  constructor(
    readonly c: ConnectorKey,
    readonly kind: (typeof STOP_KINDS)[number],
    readonly clock: (typeof CLOCKS)[number],
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.c.charger].connector(this.c.connectorId).tx !== null;
  }
  toString() {
    return `chargerStop(${connectorName(this.c)}, ${this.kind}, ${this.clock})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.c.charger];
    const side = charger.connector(this.c.connectorId);
    const tx = side.tx;
    if (!tx) return;
    side.tx = null;
    let wh: number | null = side.register;
    if (this.kind === 'reset') {
      side.register = 0;
      wh = 0;
    } else if (this.kind === 'noRegister' && charger.protocol === 'ocpp2.0.1') {
      wh = null;
    }
    const msg: ChargerMsg = {
      kind: 'stop',
      tx,
      wh,
      reason: tx.stopRequested ? 'Remote' : 'Local',
      timestamp: chargerTime(this.clock),
      seqNo: tx.seqNo++,
      offline: false,
    };
    await charger.send(msg);
  }
}

export class Repeat extends SimStep {
  constructor(readonly charger: ChargerKey) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.charger].online && w.chargers[this.charger].last !== null;
  }
  toString() {
    return `repeatLast(${this.charger})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.charger];
    const msg = charger.last?.msg;
    const kind = msg?.kind;
    const { first, again } = await within(charger.repeatLast(), 'repeated frame');
    if (msg) w.rules.repeated(this.charger, msg);
    // A repeat after a lost reply gets the same answer and changes nothing (checked after the step).
    if (kind !== 'boot' && JSON.stringify(first) !== JSON.stringify(again)) {
      throw new Error(
        `${this.toString()} of ${kind}: ${JSON.stringify(first)} then ${JSON.stringify(again)}`,
      );
    }
  }
}

/**
 * A stop naming a transaction id the gateway never gave out (0, -1). On 1.6 it is a charger that
 * lost its StartTransaction reply stopping a transaction it runs, with its real register, with or
 * without the idTag (with none running, its last such stop again). On 2.0.1 ids are the
 * charger's own strings: "0" names no transaction, and nothing moves.
 */
export class StrayStop extends SimStep {
  constructor(
    readonly charger: ChargerKey,
    readonly id: 0 | -1,
    readonly pick: number,
    readonly withIdTag: boolean,
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.charger].online;
  }
  toString() {
    return `strayStop(${this.charger}, transactionId ${this.id}, pick ${this.pick}${this.withIdTag ? ', idTag' : ''})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.charger];
    const timestamp = new Date().toISOString();
    if (charger.protocol === 'ocpp1.6') {
      const running = [...charger.connectors.values()].filter((c) => c.tx !== null);
      const side = running[this.pick % Math.max(1, running.length)];
      // With nothing running, the charger sends its last such stop again (a lost reply), or a
      // stop at register 0 if it never sent one: a charger does not invent a register.
      const again = side ? null : charger.lastLostIdStop;
      const tx = side?.tx ?? again?.tx ?? null;
      const idTag = side ? (tx && this.withIdTag ? tx.idToken : undefined) : again?.idTag;
      const meterStop = side ? side.register : (again?.meterStop ?? 0);
      if (side) side.tx = null;
      if (tx) charger.lastLostIdStop = { tx, idTag, meterStop };
      const reply = await within(
        charger.callRaw('StopTransaction', {
          transactionId: this.id,
          meterStop,
          timestamp,
          reason: 'Other',
          ...(idTag !== undefined && { idTag }),
        }),
        'stray stop',
      );
      if (again) w.model.note('1.6 stop with transactionId 0 sent again');
      const known = w.rules.lostIdStop(tx, idTag, meterStop);
      const want = idTag !== undefined && known ? { idTagInfo: { status: 'Accepted' } } : {};
      if (JSON.stringify(reply) !== JSON.stringify(want))
        throw new Error(
          `stray stop answered ${JSON.stringify(reply)}, expected ${JSON.stringify(want)}`,
        );
      return;
    }
    const reply = await within(
      charger.callRaw('TransactionEvent', {
        eventType: 'Ended',
        timestamp,
        triggerReason: 'AbnormalCondition',
        seqNo: 0,
        transactionInfo: { transactionId: String(this.id), stoppedReason: 'Other' },
        meterValue: [{ timestamp, sampledValue: [{ value: 99_999, context: 'Transaction.End' }] }],
      }),
      'stray stop',
    );
    if (JSON.stringify(reply) !== '{}')
      throw new Error(`stray stop answered ${JSON.stringify(reply)}`);
  }
}

/**
 * The charger reboots on its live link: a BootNotification, and with `resetMeters` its registers
 * restart at 0 (firmware that does not keep them). Sessions on it may now see a lower register.
 */
export class Reboot extends SimStep {
  constructor(
    readonly charger: ChargerKey,
    readonly resetMeters: boolean,
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.charger].online;
  }
  toString() {
    return `reboot(${this.charger}${this.resetMeters ? ', meters reset' : ''})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.charger];
    if (this.resetMeters) for (const c of charger.connectors.values()) c.register = 0;
    await charger.send({ kind: 'boot' });
  }
}

const STATUSES = ['Available', 'Available', 'Occupied', 'Faulted'] as const;

export class Status extends SimStep {
  constructor(
    readonly c: ConnectorKey,
    readonly status: (typeof STATUSES)[number],
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.c.charger].online;
  }
  toString() {
    return `status(${connectorName(this.c)}, ${this.status})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.c.charger];
    charger.connector(this.c.connectorId).status = this.status;
    await charger.send({ kind: 'status', connectorId: this.c.connectorId, status: this.status });
  }
}

/**
 * The connector is reported Available while its transaction runs, and no stop follows (a charger
 * that never sends it): after the stop grace the session settles on the last register; the stop,
 * if it comes later, changes nothing.
 */
export class Unplug extends SimStep {
  constructor(readonly pick: number) {
    super();
  }
  private running(w: Readonly<World>): ConnectorKey[] {
    return CONNECTORS.filter((c) => {
      const charger = w.chargers[c.charger];
      return charger.online && charger.connector(c.connectorId).tx !== null;
    });
  }
  check(w: Readonly<World>) {
    return this.running(w).length > 0;
  }
  toString() {
    return `unplug(${this.pick})`;
  }
  protected async act(w: World) {
    const running = this.running(w);
    const c = running[this.pick % running.length] as ConnectorKey;
    w.trace.push(`  (unplugged ${connectorName(c)})`);
    const charger = w.chargers[c.charger];
    charger.connector(c.connectorId).status = 'Available';
    await charger.send({ kind: 'status', connectorId: c.connectorId, status: 'Available' });
  }
}

export class Disconnect extends SimStep {
  constructor(readonly charger: ChargerKey) {
    super();
  }
  check(w: Readonly<World>) {
    return w.chargers[this.charger].online;
  }
  toString() {
    return `disconnect(${this.charger})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.charger];
    const waiting = w.model.sessions.filter(
      (s) => s.response !== null && s.connector.charger === this.charger,
    );
    await within(charger.disconnect(), 'disconnect');
    w.model.online[this.charger] = false;
    // The link dropped under the remote start: the caller hears charger_timeout, money goes back.
    for (const s of waiting) await startFailed(s, w, 'charger_timeout');
    await w.chargersOnline();
  }
}

/**
 * How a charger comes back: with a BootNotification; without one (it only lost its link, e.g. to
 * a restarted gateway); or booted and sending a live reading of each running transaction before
 * its offline queue (against 2.0.1's order, as some chargers do).
 */
const RECONNECTS = ['boot', 'boot', 'no boot', 'live first'] as const;

export class Reconnect extends SimStep {
  constructor(
    readonly charger: ChargerKey,
    readonly order: number,
    readonly how: (typeof RECONNECTS)[number] = 'boot',
  ) {
    super();
  }
  check(w: Readonly<World>) {
    return !w.chargers[this.charger].online;
  }
  toString() {
    return `reconnect(${this.charger}, order ${this.order}${this.how === 'boot' ? '' : `, ${this.how}`})`;
  }
  protected async act(w: World) {
    const charger = w.chargers[this.charger];
    await within(w.connect(this.charger, this.how !== 'no boot'), 'reconnect');
    if (this.how === 'live first') {
      for (const side of charger.connectors.values()) {
        const tx = side.tx;
        if (!tx || tx.ref === null) continue; // a 1.6 start still queued has no id to name
        await charger.send({
          kind: 'meter',
          tx,
          wh: side.register,
          encoding: 0,
          timestamp: chargerTime('now'),
          seqNo: tx.seqNo++,
          offline: false,
        });
      }
    }
    await within(charger.flush(this.order), 'offline queue replay');
  }
}

/** Short jumps (within the start timeout) come up more often than the long ones. */
const JUMPS = [
  1_000,
  1_000,
  2_500,
  2_500,
  START_TIMEOUT_SECONDS * 1000 + 1,
  30_000,
  STOP_GRACE_SECONDS * 1000,
  16 * 60_000,
] as const;

export class TimeJump extends SimStep {
  constructor(readonly ms: (typeof JUMPS)[number]) {
    super();
  }
  /**
   * Not past the gateway's call timeout while a Start waits on its remote start: on a real clock
   * the call would have timed out (the simulation models that as a dropped link), and the HTTP
   * client's own header timeout, on the same fake clock, would fail the request.
   */
  check(w: Readonly<World>) {
    return (
      this.ms <= CALL_TIMEOUT_SECONDS * 1000 || w.model.sessions.every((s) => s.response === null)
    );
  }
  toString() {
    return `timeJump(${this.ms} ms)`;
  }
  protected async act(w: World) {
    await vi.advanceTimersByTimeAsync(this.ms);
    w.model.expireTimers(w.now());
  }
}

export class Restart extends SimStep {
  constructor(readonly crash: boolean) {
    super();
  }
  check() {
    return true;
  }
  toString() {
    return this.crash ? 'crashGateway()' : 'restartGateway()';
  }
  protected async act(w: World) {
    const waiting = w.model.sessions.filter((s) => s.response !== null);
    const closed = CHARGER_KEYS.map((k) => w.chargers[k].closed());
    if (this.crash) {
      await within(w.crashAndRestart(), 'gateway crash and restart');
    } else {
      await within(w.t.restart(), 'gateway restart');
    }
    await within(Promise.all(closed), 'chargers to see the gateway go');
    for (const k of CHARGER_KEYS) w.model.online[k] = false;
    w.model.gatewayRestarted(w.now());
    for (const s of waiting) {
      if (!this.crash) {
        // Closing the gateway dropped every link under a pending remote start: charger_timeout.
        await startFailed(s, w, 'charger_timeout');
        continue;
      }
      // The process died: the caller hears nothing it can rely on, and a session still
      // authorizing is resolved by recovery (kept if the charger reports it, else refunded).
      await within(s.response as Promise<JsonResponse>, `start response of #${s.n}`).catch(
        () => undefined,
      );
      s.response = null;
      if (s.phase === 'pending') {
        s.phase = 'orphaned';
        w.model.note('authorizing session left by a crash');
      }
    }
    await w.chargersOnline();
  }
}

const TOP_UPS = [1, 500, 20_000] as const;

export class TopUp extends SimStep {
  constructor(
    readonly driver: DriverKey,
    readonly amount: (typeof TOP_UPS)[number],
    readonly reuse: number | null,
  ) {
    super();
  }
  check() {
    return true;
  }
  toString() {
    return `topUp(${this.driver}, ${this.amount}, ${this.reuse === null ? 'new ref' : `ref #${this.reuse}`})`;
  }
  protected async act(w: World) {
    const { topUps } = w.model;
    const refs = [...new Set(topUps.map((u) => u.split('|')[1] as string))];
    const old = this.reuse !== null ? refs[this.reuse % Math.max(1, refs.length)] : undefined;
    const ref = old ?? `topup-${topUps.length}`;
    // A reference is applied once per wallet: the uplink redelivering a top-up changes nothing.
    const fresh = !topUps.includes(`${this.driver}|${ref}`);
    const applied = w.topUp(this.driver, this.amount, ref);
    if (applied !== fresh) throw new Error(`top-up ${ref}: applied ${applied}, expected ${fresh}`);
    if (applied) {
      w.model.balances[this.driver] += this.amount;
      topUps.push(`${this.driver}|${ref}`);
    }
  }
}

const driver = fc.constantFrom(...DRIVER_KEYS);
const connector = fc.constantFrom(...CONNECTORS);
const chargerKey = fc.constantFrom(...CHARGER_KEYS);
const clock = fc.constantFrom(...CLOCKS);
const pick = fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.nat({ max: 7 }));

const answer = fc.constantFrom<Answer>('accept', 'accept', 'accept', 'reject', 'callerror');
const meterKind = fc.constantFrom(...METER_KINDS);
const flow = fc.constantFrom(...FLOWS);
const encoding = fc.nat({ max: ENCODINGS - 1 });
const order = fc.nat({ max: 1_000 });

/**
 * One step, weighted so that sessions get far (answered, started, metered, stopped) between the
 * disruptions (dropped links, restarts, time jumps) that try to break them.
 */
export const STEP: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(driver, connector, fc.constantFrom(...AMOUNTS))
      .map(([d, c, a]) => new Start(d, c, a)),
  },
  { weight: 8, arbitrary: fc.tuple(pick, answer).map(([p, a]) => new AnswerStart(p, a)) },
  {
    weight: 10,
    arbitrary: fc
      .tuple(connector, pick, fc.constantFrom(...START_KINDS), clock)
      .map(([c, p, k, t]) => new ChargerStart(c, p, k, t)),
  },
  {
    weight: 14,
    arbitrary: fc
      .tuple(connector, meterKind, flow, encoding, clock)
      .map(([c, k, f, e, t]) => new Meter(c, k, f, e, t)),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(connector, fc.constantFrom(...STOP_KINDS), clock)
      .map(([c, k, t]) => new ChargerStop(c, k, t)),
  },
  { weight: 4, arbitrary: chargerKey.map((k) => new Repeat(k)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(chargerKey, fc.constantFrom<0 | -1>(0, -1), pick, fc.boolean())
      .map(([k, id, p, t]) => new StrayStop(k, id, p, t)),
  },
  { weight: 2, arbitrary: fc.tuple(chargerKey, fc.boolean()).map(([k, r]) => new Reboot(k, r)) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(pick, fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)))
      .map(([p, c]) => new RetryStart(p, c)),
  },
  { weight: 2, arbitrary: fc.tuple(driver, connector).map(([d, c]) => new Quote(d, c)) },
  { weight: 1, arbitrary: driver.map((d) => new Mint(d)) },
  {
    weight: 4,
    arbitrary: fc.tuple(connector, fc.constantFrom(...STATUSES)).map(([c, s]) => new Status(c, s)),
  },
  { weight: 3, arbitrary: pick.map((p) => new Unplug(p)) },
  { weight: 1, arbitrary: chargerKey.map((k) => new Disconnect(k)) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(chargerKey, order, fc.constantFrom(...RECONNECTS))
      .map(([k, o, how]) => new Reconnect(k, o, how)),
  },
  { weight: 4, arbitrary: fc.constantFrom(...JUMPS).map((ms) => new TimeJump(ms)) },
  { weight: 1, arbitrary: fc.boolean().map((crash) => new Restart(crash)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(driver, fc.constantFrom(...TOP_UPS), fc.option(pick, { nil: null }))
      .map(([d, a, r]) => new TopUp(d, a, r)),
  },
);
