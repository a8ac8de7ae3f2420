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

/**
 * A pool: at most `limit` pieces of work given to it run at once, the others start in call order
 * as those end (resolved or rejected). What it answers is the work's own result.
 */
export function atMost(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    // A slot ending hands itself to the first waiting: `running` counts the slots taken.
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
