import { errorBody } from '../api/schemas.js';

/** Schema pieces every operator route shares. */
export const errorResponses = { '4xx': errorBody, '5xx': errorBody } as const;

export const entityId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9._:@-]+$',
} as const;
