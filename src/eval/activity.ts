import type { BrowserContext } from '@playwright/test';
import type { Model } from '../core/model.ts';
import type { Site } from '../core/site.ts';

/**
 * The agent's work as its run sees it from outside, the same for every agent: a model call
 * answered (the built-in harness's, or one through a foreign agent's gateway), a request its site
 * was asked (by the agent's pages, over plain HTTP, or a sign-in), and a browser of its own
 * attached to the site (a CDP client that connected). A claim is work too, but a run that made one
 * never ends in `error`. A run that ends in error with none of these says nothing of the agent:
 * it could not start, or crashed before it did anything, or what it needed (the site, the model's
 * endpoint) failed.
 */
export class AgentActivity {
  private seen: string | undefined;

  /** The first piece of work seen, in a few words; undefined while there is none. */
  get work(): string | undefined {
    return this.seen;
  }

  private saw(what: string): void {
    this.seen ??= what;
  }

  /** `model`, its answered calls counted (a call that failed is no work: the endpoint's failure is not the agent's). */
  model(model: Model): Model {
    return {
      id: model.id,
      chat: async (request) => {
        const response = await model.chat(request);
        this.saw('a model call answered');
        return response;
      },
    };
  }

  /** `site` as the agent gets it: each request through its `fetch` (plain HTTP, a sign-in), and each browser of the agent's own it is attached to, counted. */
  site<S extends Site>(site: S): S {
    const watched: Partial<Site> = {
      fetch: (request) => (this.saw('a request to the site'), site.fetch(request)),
      attach: (context) => (this.saw('a browser of its own (CDP)'), site.attach(context)),
    };
    // Everything else as the site has it, bound to it: a site may be a class with private state.
    return new Proxy(site, {
      get: (target, key) => {
        if (Object.hasOwn(watched, key)) return watched[key as keyof Site];
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** Counts every request of `context`'s pages from now until the answer is called: the pages the agent drives. */
  pages(context: BrowserContext): () => void {
    const onRequest = () => this.saw('a request from its page');
    context.on('request', onRequest);
    return () => context.off('request', onRequest);
  }
}
