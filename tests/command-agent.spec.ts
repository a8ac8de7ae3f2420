import { execFile } from 'node:child_process';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { expect, test } from '@playwright/test';
import { politeFetch } from '../src/sites/hn/polite-fetch.ts';
import { recordedHn } from '../src/sites/hn/site.ts';
import { serveSite } from '../src/sites/serve.ts';
import { account, firstStory } from './support.ts';

const run = promisify(execFile);

test.describe('serveSite: any site over plain HTTP on 127.0.0.1', () => {
  test('the replica: a Python urllib client with a cookie jar logs in, keeps the session and votes', async () => {
    const site = recordedHn();
    const server = await serveSite(site);
    try {
      const story = firstStory(site.replica);
      // The replica answers at https://news.ycombinator.com and so marks its cookie Secure: the jar would drop it as sent.
      const python = `
import http.cookiejar, re, sys, urllib.parse, urllib.request
base, user, password = sys.argv[1:4]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
form = urllib.parse.urlencode({"acct": user, "pw": password, "goto": "news"}).encode()
page = opener.open(base + "/login", form).read().decode()
vote = re.search(r"href=['\\"](vote\\?[^'\\"]*how=up[^'\\"]*)", page).group(1).replace("&amp;", "&")
opener.open(base + "/" + vote)
print("logged in" if "logout?auth=" in page else "logged out")
`;
      const { stdout } = await run('python3', ['-c', python, server.url, account.username, account.password]);
      expect(stdout.trim()).toBe('logged in');
      expect(site.replica.truth().votes).toEqual({ [account.username]: [story.id] });
    } finally {
      await server.close();
    }
  });

  test('a redirect to the origin points back at the server; Set-Cookie loses Secure, Domain and SameSite=None', async () => {
    const origin = 'https://site.example';
    const seen: Array<{ url: string; origin: string | null; cookie: string | null }> = [];
    const server = await serveSite({
      origin,
      async fetch(request) {
        seen.push({ url: request.url, origin: request.headers.get('origin'), cookie: request.headers.get('cookie') });
        const headers = new Headers({ location: `${origin}/next?x=1#top` });
        headers.append('set-cookie', 'a=1; Domain=.site.example; Path=/; Secure; HttpOnly');
        headers.append('set-cookie', 'b=2; SameSite=None; Secure; Partitioned');
        headers.append('set-cookie', 'c=3; SameSite=Lax');
        return new Response(null, { status: 302, headers });
      },
    });
    try {
      const response = await fetch(`${server.url}/login?goto=news`, { method: 'POST', body: 'acct=x', redirect: 'manual', headers: { origin: server.url, cookie: 'z=9' } });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${server.url}/next?x=1#top`);
      expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/; HttpOnly', 'b=2', 'c=3; SameSite=Lax']);
      expect(seen).toEqual([{ url: `${origin}/login?goto=news`, origin, cookie: 'z=9' }]);
    } finally {
      await server.close();
    }
  });

  test('a forwarder to a live site (the polite fetch) passes a client’s hop-by-hop headers and the site’s compression safely', async () => {
    // A stand-in for the live site over real HTTP: it answers compressed, as HN does.
    const upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'x-path': req.url ?? '' });
      res.end(gzipSync(`<p>front page for ${req.headers.cookie ?? 'nobody'}</p>`));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const server = await serveSite({ origin, fetch: politeFetch(origin, { intervalMs: 0, retries: 0, backoffMs: 1, maxBackoffMs: 1 }) });
    try {
      // Headers about the client's own connection, as HTTP/1.0-era clients send them: Node's fetch refuses to send them on.
      const response = await rawGet(`${server.url}/news?p=2`, { cookie: 'user=me', connection: 'keep-alive', 'keep-alive': 'timeout=5' });
      expect(response).toEqual({ status: 200, path: '/news?p=2', body: '<p>front page for user=me</p>' });
    } finally {
      await server.close();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

/** A GET as a plain HTTP client sends it, with headers Node's fetch would not let a test set. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status?: number; path: unknown; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, path: response.headers['x-path'], body }));
    }).on('error', reject);
  });
}
