/**
 * A queue: each piece of work given to it starts once the one given before it has ended (resolved
 * or rejected), in call order. What it answers is the work's own result.
 */
export function inOrder(): <T>(work: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = last.then(work);
    last = next.catch(() => undefined);
    return next;
  };
}
