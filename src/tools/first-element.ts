import type { Page } from '@playwright/test';

/**
 * `read`, run in the page on the first element matching `selector` (the one
 * `page.locator(selector).first()` finds); undefined when none matches. A selector neither the
 * browser nor Playwright can read throws, as the locator does.
 *
 * Why not the locator alone: its first use on a page compiles Playwright's selector engine into the
 * page's world, about 25 ms on 2 cores on every page a run acts on, and a click then compiles it
 * again in Playwright's own world. For a standard CSS selector on a page without shadow roots, the
 * browser's `querySelector` finds the same element; anything else (`text=`, `:has-text()`, XPath,
 * a page with a shadow root, which Playwright's CSS pierces, or no match) goes through the locator.
 */
export async function readFirstElement<R>(page: Page, selector: string, read: (element: Element) => R): Promise<R | undefined> {
  const quick = (await page.evaluate(`(${queryFirst})(${JSON.stringify(selector)}, ${read})`)) as { value: R } | null;
  if (quick) return quick.value;
  const target = page.locator(selector).first();
  if ((await target.count()) === 0) return undefined;
  return target.evaluate(read);
}

/** Runs in the page: `read` of the browser's own first match, or null where the locator must decide. */
function queryFirst<R>(selector: string, read: (element: Element) => R): { value: R } | null {
  let element: Element | null;
  try {
    element = document.querySelector(selector);
  } catch {
    return null;
  }
  if (!element) return null;
  const walker = document.createTreeWalker(document, NodeFilter.SHOW_ELEMENT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) if ((node as Element).shadowRoot) return null;
  return { value: read(element) };
}
