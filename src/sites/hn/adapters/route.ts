import type { BrowserContext, Page, Route } from '@playwright/test';
import { HN_ORIGIN } from '../options.ts';
import type { HnReplica } from '../replica.ts';

/**
 * Serves the replica at the real origin inside a browser context, so a task's URLs are the same
 * against the replica and the live site. Nothing leaves the machine.
 */
export async function routeReplica(target: BrowserContext | Page, replica: HnReplica, origin = HN_ORIGIN): Promise<void> {
  await target.route(`${origin}/**`, (route) => fulfill(route, replica));
}

function toBytes(buffer: Buffer | null): Uint8Array<ArrayBuffer> | undefined {
  return buffer ? new Uint8Array(buffer) : undefined;
}

async function fulfill(route: Route, replica: HnReplica): Promise<void> {
  const request = route.request();
  const method = request.method();
  const body = method === 'GET' || method === 'HEAD' ? undefined : toBytes(request.postDataBuffer());
  const response = await replica.handle(
    new Request(request.url(), { method, headers: await request.allHeaders(), body }),
  );
  const location = response.headers.get('location');
  await route.fulfill({
    status: response.status,
    // Playwright follows a fulfilled redirect only when its Location is absolute.
    headers: { ...Object.fromEntries(response.headers), ...(location ? { location: new URL(location, request.url()).href } : {}) },
    body: Buffer.from(await response.arrayBuffer()),
  });
}
