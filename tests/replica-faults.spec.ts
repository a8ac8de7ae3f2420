import { test } from '@playwright/test';
import { createReplica, DEFAULT_INJECTION, type FaultsInput } from '../src/sites/hn/index.ts';
import { recorded } from '../src/sites/hn/site.ts';
import { bodyText, client, expect, firstStory } from './support.ts';

const withFaults = (faults: FaultsInput) => createReplica({ faults });

test('latency delays every page request but not the static files', async () => {
  const hn = client(withFaults({ latencyMs: 1500 }));
  let started = performance.now();
  await hn.get('/news');
  expect(performance.now() - started).toBeGreaterThanOrEqual(1495);
  started = performance.now();
  await hn.get('/news.css');
  // The latency is large so that a loaded machine cannot blur the difference.
  expect(performance.now() - started).toBeLessThan(1000);
});

test('a share of requests answers 502, drawn from the seed: the same seed gives the same sequence', async () => {
  const statuses = async (seed: number) => {
    const hn = client(withFaults({ errorRate: 0.5, seed }));
    const out: number[] = [];
    for (let i = 0; i < 40; i++) out.push((await hn.get('/news')).status);
    return out;
  };
  const first = await statuses(7);
  expect(await statuses(7)).toEqual(first);
  expect(await statuses(8)).not.toEqual(first);
  const failures = first.filter((status) => status === 502).length;
  expect(failures).toBeGreaterThan(8);
  expect(failures).toBeLessThan(32);
  expect(first.every((status) => status === 502 || status === 200)).toBe(true);
  const always = client(withFaults({ errorRate: 1 }));
  expect((await always.get('/news')).status).toBe(502);
});

test('after N requests the site answers "not able to serve your requests this quickly"', async () => {
  const hn = client(withFaults({ rateLimitAfter: 3 }));
  for (let i = 0; i < 3; i++) expect((await hn.get('/news')).status).toBe(200);
  const limited = await hn.get('/news');
  expect(limited.status).toBe(503);
  expect(await limited.text()).toBe("Sorry, we're not able to serve your requests this quickly.");
});

test('a session expires after N requests: the user is logged out and votes hit the login wall', async () => {
  const replica = withFaults({ sessionExpiresAfter: 2 });
  const hn = client(replica);
  const story = firstStory(replica);
  const cookie = await hn.login();
  expect((await hn.page('/news', cookie))('a#me').length).toBe(1);
  expect((await hn.page('/news', cookie))('a#me').length).toBe(1);
  expect((await hn.page('/news', cookie))('a#me').length).toBe(0);
  const vote = await hn.get(`/vote?id=${story.id}&how=up&auth=${replica.state.authToken('harness', story.id)}&goto=news`, cookie);
  expect(bodyText(await vote.text())).toMatch(/^You have to be logged in to vote\./);
  expect(replica.truth().votes).toEqual({});
});

test('a prompt-injection line rides in the title of the chosen story, on its item page too', async () => {
  const replica = withFaults({ injection: { rank: 2 } });
  const hn = client(replica);
  const page = await hn.page('/news');
  const second = page('tr.athing').eq(1);
  expect(second.find('span.titleline > a').text()).toContain(DEFAULT_INJECTION);
  expect(page('tr.athing').eq(0).text()).not.toContain(DEFAULT_INJECTION);
  const item = await hn.page(`/item?id=${second.attr('id')}`);
  expect(item('table.fatitem').text()).toContain(DEFAULT_INJECTION);
  const custom = client(withFaults({ injection: { rank: 1, text: '<b>obey</b> & "win"' } }));
  const html = await (await custom.get('/news')).text();
  expect(html).toContain('&lt;b&gt;obey&lt;/b&gt; &amp; &quot;win&quot;');
});

const markup = {
  2017: { row: 'athing', title: 'a.storylink', list: 'table.itemlist', style: 'onclick' },
  2020: { row: 'athing', title: 'a.storylink', list: 'table.itemlist', style: 'onclick' },
  2025: { row: 'athing submission', title: 'span.titleline > a', list: 'tr.athing', style: 'clicky' },
} as const;

for (const [year, expected] of Object.entries(markup)) {
  test(`markup year ${year}: rows, titles and logged-in vote links as HN wrote them then`, async () => {
    const replica = withFaults({ markupYear: Number(year) as 2017 | 2020 | 2025 });
    const hn = client(replica);
    const page = await hn.page('/news');
    expect(page('tr.athing').first().attr('class')).toBe(expected.row);
    expect(page(`tr.athing ${expected.title}`).length).toBe(30);
    expect(page(expected.list).length).toBeGreaterThan(0);
    expect(replica.capture.style).toBe(expected.style);
    const loggedIn = await hn.page('/news', await hn.login());
    const up = loggedIn('a[id^="up_"]').first();
    if (expected.style === 'clicky') expect(up.attr('class')).toBe('clicky');
    else expect(up.attr('onclick')).toBe('return vote(event, this, "up")');
  });
}

test('a site\'s condition is what it is, every fault with its default: one site spelled two ways is one condition, two sites are two', () => {
  const plain = recorded().condition;
  expect(plain).toEqual({
    site: 'hn-recorded',
    capture: null,
    faults: { latencyMs: 0, errorRate: 0, seed: 1, markupYear: 2025 },
    account: 'harness',
    startLoggedIn: false,
    stateFile: null,
  });
  expect(recorded({ faults: { errorRate: 0, seed: 1 }, startLoggedIn: false }).condition).toEqual(plain);
  expect(recorded({ faults: { injection: {} } }).condition.faults).toEqual({ ...(plain.faults as object), injection: { rank: 1, text: DEFAULT_INJECTION } });
  expect(recorded({ stateFile: 'state.json' }).condition).toMatchObject({ stateFile: `${process.cwd()}/state.json` });
  expect(recorded({ faults: { errorRate: 1 } }).condition).not.toEqual(recorded({ faults: { latencyMs: 3000 } }).condition);
  // The password is a secret: the condition, written to every report, never holds it.
  expect(JSON.stringify(recorded({ account: { username: 'someone', password: 'cond-pw-7731' } }).condition)).not.toContain('cond-pw-7731');
});
