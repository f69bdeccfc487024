import { z } from 'zod';
import { MAX_TOKEN_LENGTH, trimPadding } from './token-key.js';

/** Control characters (C0 and DEL) inside a value, once the padding around it is trimmed. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * What is wrong with a token value given to bind (an operator's form, the cloud's roster), or
 * null when it may be bound: 1 to 36 characters once the padding around it is trimmed (the
 * longest 2.0.1 `idToken`), and no control character inside. Both edges use this one rule.
 */
export function tokenValueProblem(raw: string): string | null {
  const value = trimPadding(raw);
  if (value.length === 0) return 'a token value is not blank';
  if (value.length > MAX_TOKEN_LENGTH)
    return `a token value has at most ${MAX_TOKEN_LENGTH} characters after trimming`;
  if (hasControl(value)) return 'a token value has no control characters';
  return null;
}

/** Longest value accepted before trimming: a 36-character token padded by its reader. */
export const MAX_RAW_TOKEN_LENGTH = 64;

/** Longest label and block reason kept (the schema's label limit). */
export const MAX_TOKEN_LABEL_LENGTH = 100;
export const MAX_BLOCK_REASON_LENGTH = 200;

/** The rule as a zod schema, for the edges that read JSON with zod (MQTT roster, seed file). */
export const tokenValueSchema = z
  .string()
  .max(MAX_RAW_TOKEN_LENGTH)
  .superRefine((raw, ctx) => {
    const problem = tokenValueProblem(raw);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
