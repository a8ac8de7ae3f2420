import type { Page } from '@playwright/test';
import type { ToolCall } from '../core/model.ts';
import type { SiteAction, SiteRequest } from '../core/site.ts';
import { parseJsonObject } from '../text.ts';
import { readFirstElement } from '../tools/first-element.ts';
import type { SiteView } from './context.ts';

/** What an action call would do, resolved in the page before it runs: where it goes, whether it submits a form, and what that does to the site. */
export interface ActionTarget {
  /** The call's arguments as the model wrote them (empty when they do not parse: the tool rejects those). */
  args: Record<string, unknown>;
  /** The URL the action would load: a navigate's URL, a clicked link's href, a submitted form's action. */
  url?: URL;
  /** The action submits a form (a click on a submit control inside one). */
  submit: boolean;
  /** What the site kit's classifier makes of the request it would send; undefined when it changes nothing. */
  action?: SiteAction;
}

/**
 * Resolves an action the way the browser would: a click goes where its element's closest link
 * points, or, on a submit control, where its form posts (with its fields). The site kit classifies
 * the request. Layers that judge an action (approval, risk) read this, so the words the model
 * chose (a selector, a label) never decide it.
 */
export async function actionTarget(page: Page, call: ToolCall, site?: Pick<SiteView, 'classify'>): Promise<ActionTarget> {
  const args = parseJsonObject(call.arguments) ?? {};
  const target = call.name === 'navigate' ? { href: args.url, method: 'GET' } : call.name === 'click' ? await clickTarget(page, args.selector) : undefined;
  const url = urlOf(target?.href, page);
  const submit = target?.submit ?? false;
  const request: SiteRequest | undefined = url && { method: target!.method, url: url.href, ...(target?.body !== undefined && { body: target.body }) };
  const action = request && site?.classify(request);
  return { args, ...(url && { url }), submit, ...(action && { action }) };
}

interface ClickTarget {
  href?: unknown;
  method: string;
  submit?: boolean;
  /** A submitted form's fields, urlencoded as the browser sends them. */
  body?: string;
}

/** The href of the clicked element's closest link, or its form's action, method and fields when it submits one. */
async function clickTarget(page: Page, selector: unknown): Promise<ClickTarget | undefined> {
  if (typeof selector !== 'string') return undefined;
  try {
    return await readFirstElement(page, selector, (node): ClickTarget => {
      const link = node.closest('a');
      if (link) return { href: link.href, method: 'GET' };
      const control = node.closest('button, input');
      const submits = control instanceof HTMLButtonElement ? control.type === 'submit' : control instanceof HTMLInputElement && ['submit', 'image'].includes(control.type);
      const form = submits ? (control as HTMLButtonElement | HTMLInputElement).form : null;
      if (!form) return { method: 'GET', submit: false };
      const fields = new URLSearchParams([...new FormData(form)].map(([name, value]) => [name, String(value)]));
      const post = form.method.toUpperCase() === 'POST';
      return { href: post ? form.action : `${form.action.split('?')[0]}?${fields}`, method: post ? 'POST' : 'GET', submit: true, ...(post && { body: fields.toString() }) };
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
