import { getResponse, type RequestHandler } from 'msw';

/**
 * A fetch that msw's handlers answer in-process (the scripted doubles, replayed cassettes): a
 * request none of them answers throws, so nothing ever reaches the network.
 */
export function handlersFetch(handlers: RequestHandler[], answerer: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await getResponse(handlers, request);
    if (!response) throw new TypeError(`no ${answerer} answers ${request.method} ${request.url}`);
    return response;
  };
}
