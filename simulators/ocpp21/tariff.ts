import type { CostDetails, PriceAmount } from '../ocpp201/ocpp-types.js';

// OCPP 2.1 TariffType (I-section), the parts this station prices: an energy price per kWh and a
// fixed fee, each with optional tax rates. The other parts are named only to refuse them.

interface TaxRate {
  type: string;
  tax: number;
  stack?: number;
}

interface PriceList<P> {
  prices: P[];
  taxRates?: TaxRate[];
}

export interface Tariff {
  tariffId: string;
  currency: string;
  validFrom?: string;
  energy?: PriceList<{ priceKwh: number; conditions?: object }>;
  fixedFee?: PriceList<{ priceFixed: number; conditions?: object }>;
  chargingTime?: object;
  idleTime?: object;
  reservationTime?: object;
  reservationFixed?: object;
  minCost?: object;
  maxCost?: object;
}

/** What ChangeTransactionTariff and SetDefaultTariff answer about a tariff's content. */
export type TariffVerdict = 'Accepted' | 'TooManyElements' | 'ConditionNotSupported';

/**
 * This station prices energy and a fixed fee, one price each, without conditions: more than one
 * price is `TooManyElements`; a condition, a time or reservation price or a min/max cost is
 * `ConditionNotSupported` (a station that took them would compute a cost the CSMS did not mean).
 */
export function judgeTariff(tariff: Tariff): TariffVerdict {
  const lists: PriceList<{ conditions?: object }>[] = [tariff.energy, tariff.fixedFee].filter(
    (list) => list !== undefined,
  );
  if (lists.some((list) => list.prices.length > 1)) return 'TooManyElements';
  const unpriced = [
    tariff.chargingTime,
    tariff.idleTime,
    tariff.reservationTime,
    tariff.reservationFixed,
    tariff.minCost,
    tariff.maxCost,
  ];
  if (unpriced.some((part) => part !== undefined)) return 'ConditionNotSupported';
  const prices = lists.flatMap((list) => list.prices);
  if (prices.some((price) => price.conditions !== undefined)) return 'ConditionNotSupported';
  return 'Accepted';
}

const taxFactor = (rates: readonly TaxRate[] | undefined): number =>
  1 + (rates ?? []).reduce((sum, rate) => sum + rate.tax, 0) / 100;

// Money to the hundredth, half up, as decimal arithmetic gives it (the schema's numbers are
// decimals). A price such as 1492.61 is a binary fraction a hair off its decimal, so an exact half
// hundredth can come out as ...4999999: the amount is first snapped to a ten-thousandth of a
// hundredth (far above binary noise at any station's sums, far below a real price's digits).
const fromHundredths = (hundredths: number): number =>
  Math.round(Math.round(hundredths * 10_000) / 10_000) / 100;
const cents = (amount: number): number => fromHundredths(amount * 100);

const price = (exclTax: number, rates: readonly TaxRate[] | undefined): PriceAmount => ({
  exclTax: cents(exclTax),
  inclTax: cents(exclTax * taxFactor(rates)),
});

/** One stretch of a transaction priced by one tariff, from `fromWh` (energy since the start). */
interface Period {
  tariff: Tariff;
  startPeriod: string;
  fromWh: number;
}

/**
 * A transaction's cost as the station computes it: the first tariff prices the energy from the
 * transaction's start (and brings the fixed fee), each later one the energy from its change on.
 */
export class TransactionCost {
  private readonly periods: Period[];

  constructor(tariff: Tariff, transactionStart: string) {
    this.periods = [{ tariff, startPeriod: transactionStart, fromWh: 0 }];
  }

  get tariff(): Tariff {
    return this.current.tariff;
  }

  private get current(): Period {
    const last = this.periods.at(-1);
    if (!last) throw new Error('a transaction cost has a tariff');
    return last;
  }

  /** A new tariff (ChangeTransactionTariff) from `energyWh` since the start on. */
  change(tariff: Tariff, at: string, energyWh: number): void {
    this.periods.push({ tariff, startPeriod: at, fromWh: energyWh });
  }

  private parts(energyWh: number): { fixed: PriceAmount; energy: PriceAmount } {
    const first = this.periods[0]?.tariff;
    const fixedFee = first?.fixedFee;
    const fixed = price(fixedFee?.prices[0]?.priceFixed ?? 0, fixedFee?.taxRates);
    let exclTax = 0;
    let inclTax = 0;
    this.periods.forEach((period, index) => {
      const untilWh = this.periods[index + 1]?.fromWh ?? energyWh;
      const { energy } = period.tariff;
      // price per kWh × Wh / 1000 NGN = price × Wh / 10 hundredths.
      const net = ((energy?.prices[0]?.priceKwh ?? 0) * (untilWh - period.fromWh)) / 10;
      exclTax += net;
      inclTax += net * taxFactor(energy?.taxRates);
    });
    return {
      fixed,
      energy: { exclTax: fromHundredths(exclTax), inclTax: fromHundredths(inclTax) },
    };
  }

  /** The cost with taxes (what the driver pays) after `energyWh` since the start. */
  totalInclTax(energyWh: number): number {
    const { fixed, energy } = this.parts(energyWh);
    return cents((fixed.inclTax ?? 0) + (energy.inclTax ?? 0));
  }

  /**
   * The energy since the start (whole Wh, rounded down) at which the cost with taxes reaches
   * `maxCost` under the current tariff; Infinity when energy costs nothing.
   */
  energyForCost(maxCost: number): number {
    const { fromWh, tariff } = this.current;
    const perWh =
      ((tariff.energy?.prices[0]?.priceKwh ?? 0) / 1000) * taxFactor(tariff.energy?.taxRates);
    const spent = this.totalInclTax(fromWh);
    if (perWh <= 0) return spent >= maxCost ? fromWh : Infinity;
    let energyWh = Math.max(0, Math.floor(fromWh + (maxCost - spent) / perWh));
    // The parts are rounded to the hundredth each: their sum may lie a hundredth above.
    while (energyWh > 0 && this.totalInclTax(energyWh) > maxCost) energyWh -= 1;
    return energyWh;
  }

  /** CostDetailsType for a TransactionEvent: the running or final cost. */
  details(energyWh: number, chargingSeconds: number, idleSeconds: number): CostDetails {
    const { fixed, energy } = this.parts(energyWh);
    const hasFixed = this.periods[0]?.tariff.fixedFee !== undefined;
    return {
      chargingPeriods: this.periods.map((period, index) => ({
        tariffId: period.tariff.tariffId,
        startPeriod: period.startPeriod,
        dimensions: [
          {
            type: 'Energy' as const,
            volume: (this.periods[index + 1]?.fromWh ?? energyWh) - period.fromWh,
          },
        ],
      })),
      totalCost: {
        currency: this.tariff.currency,
        typeOfCost: 'NormalCost',
        ...(hasFixed ? { fixed } : {}),
        energy,
        total: {
          exclTax: cents((fixed.exclTax ?? 0) + (energy.exclTax ?? 0)),
          inclTax: this.totalInclTax(energyWh),
        },
      },
      totalUsage: {
        energy: energyWh,
        chargingTime: Math.round(chargingSeconds),
        idleTime: Math.max(0, Math.round(idleSeconds)),
      },
    };
  }
}
