/**
 * Work on a directory's entries a batch at a time. Each fs call of Node's is
 * a trip through libuv's thread pool, and taken one at a time those trips,
 * not the file system, set the pace on a wide tree (`npm run bench -- --only
 * trees` measures fs/copy and fs/remove of one).
 */

/** How many fs calls on one directory's entries are under way at once. */
export const SIDE_BY_SIDE = 64;

/**
 * Runs `act` on `entries` in their order; leaves (files, links: whatever
 * `isLeaf` says) side by side, up to SIDE_BY_SIDE at once, each other entry
 * (a directory, whose work may be a tree of its own) alone, after the
 * leaves before it are done. Fails with the first failure in the entries'
 * order; the leaves in that failure's batch have all been tried by then.
 */
export async function inBatches<T>(
  entries: Iterable<T> | AsyncIterable<T>,
  isLeaf: (entry: T) => boolean,
  act: (entry: T) => Promise<void>,
): Promise<void> {
  let leaves: T[] = [];
  const settleLeaves = async () => {
    const batch = leaves;
    leaves = [];
    const outcomes = await Promise.allSettled(batch.map(act));
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  };
  for await (const entry of entries) {
    if (isLeaf(entry)) {
      leaves.push(entry);
      if (leaves.length === SIDE_BY_SIDE) await settleLeaves();
      continue;
    }
    await settleLeaves();
    await act(entry);
  }
  await settleLeaves();
}
