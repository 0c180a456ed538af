import type { BotSlot } from './bot-liveness.js';

/**
 * For tests of BotLiveness without a keeper: each account's slot for its bot's record, made on
 * first use (the keeper's accounts carry theirs; see account.ts). `onVerdict` hears each verdict
 * the slot is handed (BotSlot.botVerdict), with the account's name.
 */
export function slotsByName(onVerdict: (account: string, alive: boolean) => void = () => undefined): (account: string) => BotSlot {
  const slots = new Map<string, BotSlot>();
  return (account) => {
    let s = slots.get(account);
    if (!s) slots.set(account, (s = { botVerdict: (alive) => onVerdict(account, alive) }));
    return s;
  };
}
