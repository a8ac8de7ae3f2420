import type { Page } from '@playwright/test';
import type { ToolCall } from '../core/model.ts';
import { parseJsonObject } from '../text.ts';

/** What an action call would do, resolved in the page before it runs: where it goes, and whether it submits a form. */
export interface ActionTarget {
  /** The call's arguments as the model wrote them (empty when they do not parse: the tool rejects those). */
  args: Record<string, unknown>;
  /** The URL the action would load: a navigate's URL, a clicked link's href, a submitted form's action. */
  url?: URL;
  /** The action submits a form (a click on a submit control inside one). */
  submit: boolean;
}

/**
 * Resolves an action the way the browser would: a click goes where its element's closest link
 * points, or, on a submit control, where its form posts. Layers that judge an action (approval,
 * risk) read this, so the words the model chose (a selector, a label) never decide it.
 */
export async function actionTarget(page: Page, call: ToolCall): Promise<ActionTarget> {
  const args = parseJsonObject(call.arguments) ?? {};
  if (call.name === 'navigate') return { args, url: urlOf(args.url, page), submit: false };
  if (call.name !== 'click') return { args, submit: false };
  const clicked = await clickTarget(page, args.selector);
  return { args, url: urlOf(clicked?.href, page), submit: clicked?.submit ?? false };
}

/** The href of the clicked element's closest link, or its form's action when it submits one. */
async function clickTarget(page: Page, selector: unknown): Promise<{ href?: string; submit: boolean } | undefined> {
  if (typeof selector !== 'string') return undefined;
  try {
    const target = page.locator(selector).first();
    if ((await target.count()) === 0) return undefined;
    return await target.evaluate((node) => {
      const link = node.closest('a');
      if (link) return { href: link.href, submit: false };
      const control = node.closest('button, input');
      const submits = control instanceof HTMLButtonElement ? control.type === 'submit' : control instanceof HTMLInputElement && ['submit', 'image'].includes(control.type);
      const form = submits ? (control as HTMLButtonElement | HTMLInputElement).form : null;
      return form ? { href: form.action, submit: true } : { submit: false };
    });
  } catch {
    return undefined; // not a valid selector: the click tool reports it
  }
}

function urlOf(href: unknown, page: Page): URL | undefined {
  if (typeof href !== 'string') return undefined;
  try {
    return new URL(href, page.url());
  } catch {
    return undefined;
  }
}
