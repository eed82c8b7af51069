/**
 * Bounded concurrency over a list, for the commands that read or download many things at once (the consumer
 * check, mirror, `versions list`): one neutral home below every folder. Uploads, whose width changes while they
 * run, have their own (src/publish/pool.ts).
 */

/**
 * Maps items with at most `limit` promises in flight, keeping the order of the input. When one fails, no new item
 * starts, and the first error is thrown only once every item in flight has settled (so what they use, such as a
 * scratch folder, can be removed safely afterwards).
 */
export async function mapPool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker),
  );
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (rejected) throw rejected.reason;
  return results;
}
