/**
 * Maps `fn` over `items` with at most `limit` calls in flight, started in order; resolves with the
 * results in the items' order once all have settled (each call handles its own errors). Why:
 * provisioning 50,000 accounts at once opened 50,000 key and agent files together and failed with
 * EMFILE; the request budget admits a few hundred a second anyway, so a few hundred in flight lose
 * nothing.
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
