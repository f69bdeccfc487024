import type { ScreenEvent } from '../shared/events.js';
import type { IncomingCalls } from './ocpp-types.js';

const VENDOR = 'org.openchargealliance.costmsg';

type DataTransfer = IncomingCalls['DataTransfer'];

/**
 * The Open Charge Alliance cost-and-price messages a cost-screen charger shows: SetUserPrice,
 * RunningCost and FinalCost, their `data` a JSON text. Any other DataTransfer is an unknown
 * vendor, as it is for a charger without the screen.
 */
export async function costMessage(
  req: DataTransfer['req'],
  screen: boolean,
  show: (event: ScreenEvent) => void,
): Promise<DataTransfer['conf']> {
  if (!screen || req.vendorId !== VENDOR) return { status: 'UnknownVendorId' };
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(req.data ?? '') as Record<string, unknown>;
  } catch {
    return { status: 'Rejected' };
  }
  const text = (key: string) => (typeof data[key] === 'string' ? { text: data[key] } : {});
  const cost = typeof data.cost === 'number' ? { cost: data.cost } : {};
  const tx = typeof data.transactionId === 'number' ? { transactionId: data.transactionId } : {};
  switch (req.messageId) {
    case 'SetUserPrice':
      show({ via: 'SetUserPrice', ...text('priceText') });
      return { status: 'Accepted' };
    case 'RunningCost':
    case 'FinalCost':
      show({ via: req.messageId, ...text('priceText'), ...cost, ...tx });
      return { status: 'Accepted' };
    default:
      return { status: 'UnknownMessageId' };
  }
}
