import type { ScreenEvent } from '../shared/events.js';

/** 2.0.1 MessageContentType. */
export interface MessageContent {
  format: string;
  language?: string;
  content: string;
}

/** The screen parts of an Authorize or TransactionEvent answer. */
export interface ScreenAnswer {
  totalCost?: number;
  idTokenInfo?: { personalMessage?: MessageContent };
  updatedPersonalMessage?: MessageContent;
}

/**
 * What a cost-screen station shows from an answer: the personal message of the authorization,
 * the updated one and the total cost of a TransactionEvent answer. A station without the screen
 * shows nothing.
 */
export function showAnswer(
  screen: boolean,
  answer: ScreenAnswer,
  transactionId: string | undefined,
  show: (event: ScreenEvent) => void,
): void {
  if (!screen) return;
  const tx = transactionId === undefined ? {} : { transactionId };
  const personal = answer.idTokenInfo?.personalMessage;
  if (personal) show({ via: 'personalMessage', text: personal.content, ...tx });
  const updated = answer.updatedPersonalMessage;
  if (updated || answer.totalCost !== undefined) {
    show({
      via: 'totalCost',
      ...(updated ? { text: updated.content } : {}),
      ...(answer.totalCost === undefined ? {} : { cost: answer.totalCost }),
      ...tx,
    });
  }
}

/** SetDisplayMessage and CostUpdated, answered and shown by a cost-screen station. */
export const screenCalls = (show: (event: ScreenEvent) => void) => ({
  SetDisplayMessage: async (req: {
    message: { id: number; transactionId?: string; message: MessageContent };
  }) => {
    const tx = req.message.transactionId;
    show({
      via: 'SetDisplayMessage',
      text: req.message.message.content,
      ...(tx === undefined ? {} : { transactionId: tx }),
    });
    return { status: 'Accepted' as const };
  },
  CostUpdated: async (req: { totalCost: number; transactionId: string }) => {
    show({ via: 'CostUpdated', cost: req.totalCost, transactionId: req.transactionId });
    return {};
  },
});
