import { callForReply } from '../calls/operator-call.js';
import { asciiText, sendScreenCall } from '../calls/screen-call.js';
import type { ScreenWay } from '../charger-state/screen-support.js';
import type { ScreenNote, ScreenOutcome } from '../port.js';
import type { AdapterContext } from '../protocol-adapter.js';

/** 2.0.1 MessageContentType: content at most 512 characters. */
const CONTENT_MAX = 512;
/** The device-model variables that say what a station shows (Component, Variable, instance). */
const SCREEN_VARIABLES = [
  ['TariffCostCtrlr', 'Enabled', 'Tariff'],
  ['TariffCostCtrlr', 'Enabled', 'Cost'],
  ['TariffCostCtrlr', 'Currency', undefined],
  ['DisplayMessageCtrlr', 'Enabled', undefined],
  ['DisplayMessageCtrlr', 'Available', undefined],
] as const;

export interface MessageContent {
  format: 'ASCII';
  language: 'en';
  content: string;
}

/** What a TransactionEvent answer carries for the screen (TransactionEventResponse fields). */
export interface ScreenAnswer {
  personalMessage?: MessageContent;
  totalCost?: number;
  updatedPersonalMessage?: MessageContent;
}

interface GetVariablesConf {
  getVariableResult?: {
    attributeStatus?: string;
    attributeValue?: string;
    component?: { name?: string };
    variable?: { name?: string; instance?: string };
  }[];
}

/**
 * What the station advertises in its device model: `TariffCostCtrlr` Enabled[Tariff] (a personal
 * message in the authorization answers), Enabled[Cost] with the currency unset or NGN (totalCost in
 * TransactionEvent answers, CostUpdated), `DisplayMessageCtrlr` Enabled, or Available when it has
 * no Enabled (SetDisplayMessage).
 */
export async function readScreenWays201(ctx: AdapterContext): Promise<ScreenWay[]> {
  const reply = await callForReply({ ctx }, 'GetVariables', {
    getVariableData: SCREEN_VARIABLES.map(([component, variable, instance]) => ({
      component: { name: component },
      variable: { name: variable, ...(instance && { instance }) },
    })),
  });
  const results =
    reply.status === 'CallError' ? [] : ((reply.raw as GetVariablesConf).getVariableResult ?? []);
  const value = (component: string, variable: string, instance?: string) => {
    const r = results.find(
      (x) =>
        x.component?.name === component &&
        x.variable?.name === variable &&
        x.variable.instance === instance &&
        x.attributeStatus === 'Accepted',
    );
    return r?.attributeValue?.trim();
  };
  const on = (v: string | undefined) => v?.toLowerCase() === 'true';
  const ways: ScreenWay[] = [];
  if (on(value('TariffCostCtrlr', 'Enabled', 'Tariff'))) ways.push('personalMessage');
  const currency = value('TariffCostCtrlr', 'Currency');
  if (on(value('TariffCostCtrlr', 'Enabled', 'Cost')) && (!currency || currency === 'NGN'))
    ways.push('totalCost', 'CostUpdated');
  const display =
    value('DisplayMessageCtrlr', 'Enabled') ?? value('DisplayMessageCtrlr', 'Available');
  if (on(display)) ways.push('SetDisplayMessage');
  return ways;
}

export function messageContent(text: string): MessageContent {
  return { format: 'ASCII', language: 'en', content: asciiText(text, CONTENT_MAX) };
}

/**
 * How a 2.0.1 station is told what the driver paid. Whatever can ride on the answer the station is
 * waiting for does (a personal message, the total cost: no message of its own); the rest goes as
 * calls: SetDisplayMessage for the transaction (the paid amount, then the running cost, one
 * message replaced), CostUpdated for a running cost heard outside a TransactionEvent. Only what
 * the station advertised (readScreenWays201).
 */
export class Screen201 {
  /** Transactions whose TransactionEvent is being answered now, with what the answer carries. */
  private readonly answering = new Map<string, ScreenAnswer>();
  /** The display message id of each transaction's message (replaced as its cost moves). */
  private readonly displayIds = new Map<string, number>();
  private nextDisplayId: number;

  constructor(private readonly ctx: AdapterContext) {
    // Ids of this connection's messages: after those of an earlier connection, within int32.
    this.nextDisplayId = Math.floor(ctx.clock.now() / 1000) % 1_000_000_000;
  }

  /** Runs `answer` with the transaction open for screen notes; returns what they left for it. */
  during<T>(transactionId: string, answer: () => T): { result: T; screen: ScreenAnswer } {
    const screen: ScreenAnswer = {};
    this.answering.set(transactionId, screen);
    try {
      return { result: answer(), screen };
    } finally {
      this.answering.delete(transactionId);
    }
  }

  prepare(): void {
    if (!this.ctx.screens.known(this.ctx.chargerId)) void this.ways();
  }

  /** The personal message of an Authorize answer, when the station shows one. */
  personalMessage(text: string | undefined): MessageContent | undefined {
    if (text === undefined) return undefined;
    const ways = this.ctx.screens.known(this.ctx.chargerId);
    if (!ways) void this.ways();
    return ways?.has('personalMessage') ? messageContent(text) : undefined;
  }

  async show(note: ScreenNote): Promise<ScreenOutcome> {
    const answer = this.answering.get(note.transactionRef);
    const ways = this.ctx.screens.known(this.ctx.chargerId) ?? (await this.ways());
    // After a wait for the read, the answer is gone: only calls are left.
    const riding = answer !== undefined && this.answering.get(note.transactionRef) === answer;
    let rode = false;
    if (riding && ways.has('personalMessage')) {
      if (note.kind === 'paid') answer.personalMessage = messageContent(note.text);
      else answer.updatedPersonalMessage = messageContent(note.text);
      rode = true;
    }
    if (riding && note.kind !== 'paid' && ways.has('totalCost')) {
      answer.totalCost = note.costNgn;
      rode = true;
    }
    const calls: Promise<ScreenOutcome>[] = [];
    if (note.kind !== 'final' && ways.has('SetDisplayMessage')) calls.push(this.display(note));
    if (note.kind === 'running' && !riding && ways.has('CostUpdated')) {
      calls.push(
        sendScreenCall(this.ctx, 'CostUpdated', 'CostUpdated', {
          totalCost: note.costNgn,
          transactionId: note.transactionRef,
        }),
      );
    }
    if (note.kind === 'final') this.displayIds.delete(note.transactionRef);
    const outcomes = await Promise.all(calls);
    if (outcomes.includes('sent')) return 'sent';
    if (rode) return 'answer';
    return outcomes[0] ?? 'unsupported';
  }

  private ways(): Promise<ReadonlySet<ScreenWay>> {
    return this.ctx.screens.ways(this.ctx.chargerId, () => readScreenWays201(this.ctx));
  }

  /** The transaction's message, shown in front while it runs; the station drops it at its end. */
  private display(note: ScreenNote): Promise<ScreenOutcome> {
    let id = this.displayIds.get(note.transactionRef);
    if (id === undefined) {
      if (this.displayIds.size >= 256) this.displayIds.clear();
      id = this.nextDisplayId++;
      this.displayIds.set(note.transactionRef, id);
    }
    return sendScreenCall(
      this.ctx,
      'SetDisplayMessage',
      'SetDisplayMessage',
      {
        message: {
          id,
          priority: 'InFront',
          transactionId: note.transactionRef,
          message: messageContent(note.text),
        },
      },
      // The transaction ended before the message arrived: the moment passed, not the way.
      { passing: ['UnknownTransaction'] },
    );
  }
}
