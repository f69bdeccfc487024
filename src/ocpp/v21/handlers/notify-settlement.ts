import type { ConnectionContext201 } from '../../v201/connection-context.js';

interface NotifySettlementReq {
  transactionId?: string;
  pspRef: string;
  status: string;
  settlementAmount: number;
  settlementTime: string;
  receiptId?: string;
  receiptUrl?: string;
}

/**
 * Money news from the station's payment terminal (a card paid at the station, not through the
 * gateway). The gateway's drivers pay from their wallets and every session is billed from the
 * wallet alone: a settlement is recorded and alerted for the operator to reconcile by hand, and
 * never moves wallet money. The answer names no receipt (the gateway issues none).
 */
export function notifySettlement({ ctx }: ConnectionContext201, req: NotifySettlementReq) {
  const payment = {
    pspRef: req.pspRef,
    status: req.status,
    amount: req.settlementAmount,
    at: req.settlementTime,
    transactionId: req.transactionId ?? null,
  };
  ctx.log.warn({ chargerId: ctx.chargerId, ...payment }, 'payment terminal settlement: not billed');
  ctx.reports.noted('NotifySettlement', `${req.status} ${req.settlementAmount}: not billed`, req);
  ctx.reports.stationPayment(payment);
  return {};
}
