import type { BrowserContext } from '@playwright/test';
import type { Site } from '../src/core/site.ts';

/**
 * `site` with a page that is asked for and never answered: what a hung upstream looks like to a
 * browser. On the site's own origin, since a run's browser reaches nothing else: its route, laid
 * after the site's, takes the request and holds it.
 */
export function hungPage<S extends Pick<Site, 'origin' | 'attach'>>(site: S): { site: S; url: string; accepted: () => number } {
  const url = `${site.origin}/hung`;
  let accepted = 0;
  const attach = async (context: BrowserContext) => {
    await site.attach(context);
    await context.route(url, () => {
      accepted += 1;
    });
  };
  return { site: { ...site, attach }, url, accepted: () => accepted };
}
