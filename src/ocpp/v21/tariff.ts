import { callForReply } from '../calls/operator-call.js';
import type { SessionTariff } from '../port.js';
import type { ConnectionContext201 } from '../v201/connection-context.js';

interface GetVariablesConf {
  getVariableResult?: { attributeStatus?: string; attributeValue?: string }[];
}

/**
 * Whether the station computes cost itself: `TariffCostCtrlr.Enabled[Tariff]` true (OCPP 2.1
 * I-block). Read once per connection at configure time; a station that cannot say computes none.
 */
export async function readLocalCost(conn: ConnectionContext201): Promise<boolean> {
  const reply = await callForReply(conn, 'GetVariables', {
    getVariableData: [
      { component: { name: 'TariffCostCtrlr' }, variable: { name: 'Enabled', instance: 'Tariff' } },
    ],
  });
  if (reply.status === 'CallError') return false;
  const result = (reply.raw as GetVariablesConf).getVariableResult?.[0];
  return (
    result?.attributeStatus === 'Accepted' && result.attributeValue?.trim().toLowerCase() === 'true'
  );
}

/**
 * The session's tariff as OCPP 2.1 TariffType: its energy price per kWh, in NGN, no tax split
 * (the gateway has none) and nothing else priced (no time, idle or fixed fee).
 */
export function tariffType(tariff: SessionTariff) {
  return {
    tariffId: tariff.tariffId.slice(0, 60),
    currency: 'NGN',
    energy: { prices: [{ priceKwh: tariff.microNgnPerWh / 1000 }] },
  };
}

/** ChangeTransactionTariff; returns the station's status word (`CallError` for a CALLERROR). */
export async function changeTransactionTariff(
  conn: ConnectionContext201,
  transactionId: string,
  tariff: SessionTariff,
): Promise<string> {
  const reply = await callForReply(conn, 'ChangeTransactionTariff', {
    transactionId,
    tariff: tariffType(tariff),
  });
  return reply.status;
}
