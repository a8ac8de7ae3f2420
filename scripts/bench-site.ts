/**
 * `npm run bench:site`: how fast the replica serves `/news` to a logged-in user (the derived view)
 * compared with the same bytes served as a static file through the same HTTP adapter.
 * Target: median under 5 ms and at most 1.5 times the static file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReplica, serveReplica } from '../src/sites/hn/index.ts';

const ROUNDS = 2000;
const WARMUP = 200;

const replica = createReplica();
const login = await replica.handle(
  new Request('http://bench/login', { method: 'POST', body: new URLSearchParams({ acct: 'harness', pw: 'battery-staple-42', goto: 'news' }) }),
);
const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
const derived = await (await replica.handle(new Request('http://bench/news', { headers: { cookie } }))).text();
const file = join(tmpdir(), 'harness-eval-bench-news.html');
await writeFile(file, derived);

const dynamic = await serveReplica(replica, { port: 0 });
// The baseline reads the file on every request, as a static file server does.
const fixed = await serveReplica({ ...replica, handle: async () => new Response(await readFile(file), { headers: { 'content-type': 'text/html; charset=utf-8' } }) }, { port: 0 });

async function time(url: string): Promise<number> {
  const started = performance.now();
  const body = await (await fetch(url, { headers: { cookie } })).text();
  const elapsed = performance.now() - started;
  if (body.length !== derived.length) throw new Error(`unexpected body from ${url}`);
  return elapsed;
}

async function render(): Promise<number> {
  const started = performance.now();
  await (await replica.handle(new Request('http://bench/news', { headers: { cookie } }))).text();
  return performance.now() - started;
}

const samples = { derived: [] as number[], static: [] as number[], render: [] as number[] };
for (let i = 0; i < WARMUP + ROUNDS; i++) {
  // Interleaved so that both see the same machine noise.
  const d = await time(`${dynamic.url}/news`);
  const s = await time(`${fixed.url}/news`);
  const r = await render();
  if (i >= WARMUP) samples.derived.push(d), samples.static.push(s), samples.render.push(r);
}
await Promise.all([dynamic.close(), fixed.close()]);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const derivedMs = median(samples.derived);
const staticMs = median(samples.static);
const ratio = derivedMs / staticMs;
console.log(`GET /news logged in (derived view), ${derived.length} bytes, ${ROUNDS} requests over HTTP`);
console.log(`  derived view  median ${derivedMs.toFixed(3)} ms`);
console.log(`  static file   median ${staticMs.toFixed(3)} ms`);
console.log(`  handler alone (in process, no HTTP) median ${median(samples.render).toFixed(3)} ms`);
console.log(`  ratio ${ratio.toFixed(2)} (target ≤ 1.5), derived median ${derivedMs < 5 ? 'under' : 'OVER'} 5 ms`);
