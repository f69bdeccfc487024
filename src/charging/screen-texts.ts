/**
 * What the driver reads on the charger's screen, in English, short enough for any display (a
 * 1.6 DataTransfer text, a 2.0.1 message of at most 512 characters): whole NGN with thousands
 * separators, energy in kWh to one decimal. Plain ASCII: every screen format takes it.
 */

export function ngn(amount: number): string {
  return `NGN ${String(Math.trunc(amount)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
}

export function kwh(wh: number): string {
  return `${(Math.max(0, wh) / 1000).toFixed(1)} kWh`;
}

/** A session paid and about to start (or started). */
export function paidText(paidNgn: number, paidWh: number, walletNgn: number): string {
  return `Paid ${ngn(paidNgn)} for up to ${kwh(paidWh)}. Wallet: ${ngn(walletNgn)}.`;
}

/** The cost so far, and what of the paid amount remains. */
export function runningText(costNgn: number, paidNgn: number, energyWh: number): string {
  return `Used ${ngn(costNgn)} of ${ngn(paidNgn)} (${kwh(energyWh)}). ${ngn(paidNgn - costNgn)} left.`;
}

/** The settled cost, the credit back and the wallet after it. */
export function finalText(
  costNgn: number,
  energyWh: number,
  creditedNgn: number,
  walletNgn: number,
): string {
  return `Total ${ngn(costNgn)} for ${kwh(energyWh)}. ${ngn(creditedNgn)} back to your wallet: ${ngn(walletNgn)}.`;
}
