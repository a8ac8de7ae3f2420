// The shared browser's server, in a process of its own (shared-browser.ts's globalSetup starts it):
// the workers connect to it directly, so their page traffic never waits on the runner's event loop.
// Plain JavaScript: it runs under plain Node, from src/ in this repository and from dist/ once built.
//
//   node browser-server.mjs <playwright-core's entry>   with HARNESS_EVAL_BROWSER_OPTIONS: the launch options, as JSON
//
// It prints one line, {"wsEndpoint": ...} or {"error": <the failure's first line>}, and closes the
// browser and exits when its stdin ends: the teardown ends it, and so does the runner's death, a
// SIGKILL's included. It ignores SIGINT, SIGTERM and SIGHUP: a Ctrl-C leaves the browser to the
// workers still recording their runs, until the teardown.
import { createRequire } from 'node:module';

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
const ended = new Promise((resolve) => process.stdin.on('end', resolve).on('error', resolve).resume());
// The runner may be gone before it reads the line: the stdin's end then closes the browser.
process.stdout.on('error', () => {});
const say = (message) => new Promise((resolve) => process.stdout.write(`${JSON.stringify(message)}\n`, resolve));

try {
  const { chromium } = createRequire(import.meta.url)(process.argv[2]);
  const options = JSON.parse(process.env.HARNESS_EVAL_BROWSER_OPTIONS);
  const server = await chromium.launchServer({ ...options, host: '127.0.0.1', handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  await say({ wsEndpoint: server.wsEndpoint() });
  await ended;
  await server.close();
} catch (error) {
  // Playwright's message runs on for pages (the whole command line, its log): its first line says what failed.
  await say({ error: String(error?.message ?? error).split('\n')[0] });
  process.exitCode = 1;
}
process.exit();
