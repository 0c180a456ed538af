/**
 * Runs `fn` over `items` with at most `limit` calls in flight, in order; resolves when all have
 * settled (each call handles its own errors). Why: provisioning 50,000 accounts at once opened
 * 50,000 key and agent files together and failed with EMFILE; the request budget admits a few
 * hundred a second anyway, so a few hundred in flight lose nothing.
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
