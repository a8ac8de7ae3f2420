import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { InputError } from '../input.ts';

export const INIT_USAGE = `harness-eval init kit DIR [--name NAME]
                                                      a site kit for your own app in DIR (a new or empty folder): a
                                                      stand-in app to replace, its site, two tasks with references, the
                                                      controls and a config; green as written (npx playwright test -c DIR)`;

/** The template the kit is made from: templates/kit/ of the package, from src/cli/ and from dist/cli/ alike. */
const TEMPLATE = new URL('../../templates/kit/', import.meta.url);

/** A site's name: it is the kit's origin's host (`https://NAME.example`) and its name in cells. */
const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Writes a new kit into DIR, each template file with `__NAME__` as the kit's name; answers the files written, and what to do next. */
export function initKit(args: string[]): string[] {
  const { values, positionals } = parseArgs({ args, options: { name: { type: 'string' } }, allowPositionals: true, strict: true });
  const [kind, dir, ...extra] = positionals;
  if (kind !== 'kit') throw new InputError(`init: expected "init kit DIR", got "init ${positionals.join(' ')}"`);
  if (dir === undefined || extra.length > 0) throw new InputError('init kit: expected one folder, DIR');
  const out = resolve(dir);
  if (existsSync(out) && readdirSync(out).length > 0) throw new InputError(`init kit: ${dir} is not empty: a kit is written into a new or empty folder`);
  const name = values.name ?? basename(out).toLowerCase();
  if (!NAME.test(name)) throw new InputError(`init kit: --name: expected a lowercase name of letters, digits and dashes (the site's host), got "${name}"`);
  mkdirSync(out, { recursive: true });
  const files = readdirSync(TEMPLATE).sort();
  for (const file of files) writeFileSync(join(out, file), readFileSync(new URL(file, TEMPLATE), 'utf8').replaceAll('__NAME__', name));
  return [...files.map((file) => join(dir, file)), `A kit in ${dir}: run it with npx playwright test -c ${dir}, then replace app.mjs with your app (docs/own-app.md).`];
}
