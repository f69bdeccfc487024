import type { Handler201 } from '../connection-context.js';

/** A message the gateway answers and keeps for the operator, without acting on it. */
export function recorded(action: string): Handler201 {
  return ({ ctx }, req) => {
    ctx.reports.noted(action, 'noted', req);
    return {};
  };
}
