import type { RequestHandler } from 'msw';

export type Msw = typeof import('msw');

/**
 * A fetch that msw's handlers answer in-process (the scripted doubles, replayed cassettes): a
 * request none of them answers throws, so nothing ever reaches the network. msw (and the GraphQL
 * it brings, some 20 MB a process) loads at the first request: a worker whose runs use neither
 * never holds it. `handlers` are built once, from the loaded msw.
 */
export function handlersFetch(handlers: (msw: Msw) => RequestHandler[], answerer: string): typeof fetch {
  let loaded: Promise<{ getResponse: Msw['getResponse']; built: RequestHandler[] }> | undefined;
  return async (input, init) => {
    const request = new Request(input, init);
    const { getResponse, built } = await (loaded ??= import('msw').then((msw) => ({ getResponse: msw.getResponse, built: handlers(msw) })));
    const response = await getResponse(built, request);
    if (!response) throw new TypeError(`no ${answerer} answers ${request.method} ${request.url}`);
    return response;
  };
}
