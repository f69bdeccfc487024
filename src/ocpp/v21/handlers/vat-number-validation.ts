import type { ConnectionContext201 } from '../../v201/connection-context.js';

interface VatNumberValidationReq {
  vatNumber: string;
  evseId?: number;
}

/**
 * A driver's VAT number for an ad hoc payment's receipt: the gateway has no VAT registry to check
 * it against, so it is Rejected (the station's receipt goes without it) and kept.
 */
export function vatNumberValidation({ ctx }: ConnectionContext201, req: VatNumberValidationReq) {
  ctx.reports.noted('VatNumberValidation', 'no VAT registry: Rejected', req);
  return {
    vatNumber: req.vatNumber,
    ...(req.evseId !== undefined && { evseId: req.evseId }),
    status: 'Rejected',
    statusInfo: { reasonCode: 'NotSupported' },
  };
}
