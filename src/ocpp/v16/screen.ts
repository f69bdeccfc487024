import { sendScreenCall } from '../calls/screen-call.js';
import type { ScreenWay } from '../charger-state/screen-support.js';
import type { ConfigurationReport, ScreenNote, ScreenOutcome } from '../port.js';
import { configurationValue, readConfiguration } from './calls/get-configuration.js';
import type { AdapterContext } from '../protocol-adapter.js';

/**
 * The Open Charge Alliance's cost-and-price messages for 1.6 ("OCPP & California Pricing
 * Requirements"): DataTransfer with this vendorId, its `data` a JSON text.
 */
export const COST_VENDOR_ID = 'org.openchargealliance.costmsg';
/** The read-only key a charger that implements them sets true. */
export const COST_KEY = 'CustomDisplayCostAndPrice';
const COST_MESSAGES = ['SetUserPrice', 'RunningCost', 'FinalCost'] as const;
/** Tokens told their price on this connection, with the text: an Authorize and its start say it once. */
const TOLD_MAX = 64;

/** Whether the charger advertises the cost-and-price messages. */
export async function readScreenWays16(ctx: AdapterContext): Promise<ScreenWay[]> {
  return screenWaysIn(await readConfiguration({ ctx }, [COST_KEY]));
}

/** The ways a configuration report that asked for `COST_KEY` says the charger has. */
export function screenWaysIn(held: ConfigurationReport): ScreenWay[] {
  return configurationValue(held, COST_KEY)?.trim().toLowerCase() === 'true'
    ? [...COST_MESSAGES]
    : [];
}

/**
 * How a 1.6 charger is told what the driver paid: SetUserPrice when the token is accepted (after
 * Authorize, or at the transaction's start when no Authorize came first), RunningCost with the
 * cost so far, FinalCost with the settled cost. Only to a charger whose `CustomDisplayCostAndPrice`
 * is true, each after the answer the charger waits for.
 */
export class Screen16 {
  private readonly told = new Map<string, string>();

  constructor(private readonly ctx: AdapterContext) {}

  /** After an Authorize answered Accepted with a message for the driver. */
  tokenAccepted(idTag: string, text: string | undefined): void {
    if (text === undefined) return;
    void this.userPrice(idTag, text);
  }

  async show(note: ScreenNote): Promise<ScreenOutcome> {
    switch (note.kind) {
      case 'paid':
        return this.userPrice(note.idToken, note.text);
      case 'running':
        return this.send('RunningCost', note.transactionRef, (transactionId) => ({
          transactionId,
          timestamp: note.timestamp,
          meterValue: Math.round(note.registerWh ?? note.energyWh),
          cost: note.costNgn,
          state: 'Charging',
          chargingPrice: { kWhPrice: note.ngnPerKwh },
        }));
      case 'final':
        return this.send('FinalCost', note.transactionRef, (transactionId) => ({
          transactionId,
          cost: note.costNgn,
          priceText: note.text,
        }));
    }
  }

  private async userPrice(idTag: string, text: string): Promise<ScreenOutcome> {
    if (this.told.get(idTag) === text) return 'sent';
    if (!(await this.supports('SetUserPrice'))) return 'unsupported';
    if (this.told.size >= TOLD_MAX) this.told.clear();
    this.told.set(idTag, text);
    return this.dataTransfer('SetUserPrice', { idToken: idTag, priceText: text });
  }

  private async send(
    messageId: (typeof COST_MESSAGES)[number],
    transactionRef: string,
    data: (transactionId: number) => Record<string, unknown>,
  ): Promise<ScreenOutcome> {
    const transactionId = Number(transactionRef);
    if (!Number.isInteger(transactionId)) return 'unsupported';
    if (!(await this.supports(messageId))) return 'unsupported';
    return this.dataTransfer(messageId, data(transactionId));
  }

  private async supports(way: ScreenWay): Promise<boolean> {
    const { ctx } = this;
    const ways = await ctx.screens.ways(ctx.chargerId, () => readScreenWays16(ctx));
    return ways.has(way);
  }

  private dataTransfer(messageId: string, data: Record<string, unknown>): Promise<ScreenOutcome> {
    return sendScreenCall(this.ctx, messageId, 'DataTransfer', {
      vendorId: COST_VENDOR_ID,
      messageId,
      data: JSON.stringify(data),
    });
  }
}
