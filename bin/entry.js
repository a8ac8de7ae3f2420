// Where the command-line entry points load from: a checkout of the repository (src/ beside bin/)
// runs its sources through tsx, so it never runs a stale build; the installed package, which ships
// no src/, runs its compiled dist/.
import { existsSync } from 'node:fs';

/** Imports src/cli/<name>.ts in a checkout, dist/cli/<name>.js in the installed package. */
export async function importEntry(name) {
  const source = new URL(`../src/cli/${name}.ts`, import.meta.url);
  if (!existsSync(source)) return import(new URL(`../dist/cli/${name}.js`, import.meta.url).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(source.href);
}
