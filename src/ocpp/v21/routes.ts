import type { Routes201 } from '../v201/adapter.js';
import { ROUTES201 } from '../v201/routes.js';

/**
 * Every call a 2.1 station may send that the gateway answers: 2.0.1's (2.1 keeps their messages,
 * adding optional fields), and the calls 2.1 added.
 */
export const ROUTES21: Routes201 = {
  ...(ROUTES201 as Routes201),
};
