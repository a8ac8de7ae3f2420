import type { OfferedTool } from '../models/scripted/endpoint.ts';
import { parseJsonObject } from '../text.ts';

/**
 * The tools an agent offers, read by what they can do, so that a double drives any agent: its own
 * tools, not only harness-eval's. The doubles think in a small vocabulary of moves (open a page,
 * click, read the page, …) on the site's own addresses; a move becomes a call of whichever
 * offered tool can make it (calls.ts), and a call the agent made is read back as the move it was.
 * A site kit's doubles think in its dialect besides: its own addresses, and moves of its own.
 */

/**
 * Moves of a site kit's own, each declared by its kit by augmenting this interface (HN's
 * `get_stories`, in sites/hn/doubles/toolbox.ts), and made with the readers of its dialect.
 */
export interface KitMoves {}

/** The doubles' own moves: harness-eval's browser tools', and the kits'. */
export type Move = 'navigate' | 'click' | 'fill' | 'get_text' | 'current_url' | 'has_class' | 'finish' | 'run_program' | 'screenshot' | 'view_screenshot' | keyof KitMoves;

/**
 * What a site kit's doubles think in beyond what every site's do: the site's own addresses, page
 * readers of its own (HN's list of stories), and the moves its links stand for. The doubles that
 * follow a task's reference on any site (follow.ts) have the site's origin alone.
 */
export interface Dialect {
  /** The site's own origin, with its slash (`https://example.com/`): where the doubles' addresses point. */
  site: string;
  /** The page a double opens to read again when no result said where the browser is. */
  home: string;
  /**
   * Page readers of the kit's own, before `get_text`: each a tool without parameters, known by
   * what its description says it returns, and the programs that make it (see PROGRAMS). Where the
   * agent offers no tool for one page reader, another stands in.
   */
  readers: ReadonlyArray<{ move: Move; describes: RegExp; programs: Program[] }>;
  /** A page of the site opened that is a move of the kit's own (HN's vote link: a click on its arrow), as that move. */
  moveAt?(url: URL): { name: Move; args: Record<string, unknown> } | undefined;
  /** For an agent with no tool to click, the page to open that makes the click (HN's arrow: the vote link the latest results showed), if there is one. */
  clickAt?(selector: string, results: ReadonlyArray<Record<string, unknown>>, origin: string): string | undefined;
}

interface Capable {
  name: string;
  move: Move;
  /** Its parameters' names. */
  params: string[];
  /** What it says of itself: a program tool's API. */
  description: string;
}

/** The parameter a page-opening tool takes, and whether it wants a path (`/news`) rather than a URL. */
const ADDRESS_PARAMS: Array<[name: string, path: boolean]> = [
  ['url', false],
  ['href', false],
  ['link', false],
  ['address', false],
  ['path', true],
];

/** A tool without parameters, by what its description says it returns; the first that fits (a dialect's readers before these). */
const READERS: Array<[Move, RegExp]> = [
  ['get_text', /\b(?:text|content|html|markup|markdown)\b/i],
  ['current_url', /\b(?:url|address|location)\b/i],
];

function moveOf(tool: OfferedTool['function'], dialect: Dialect): Move | undefined {
  const properties = tool.parameters?.properties ?? {};
  const params = Object.keys(properties);
  const typeOf = (name: string) => [properties[name]?.type].flat();
  const has = (name: string) => params.includes(name);
  if (params.some((name) => name === 'success' && typeOf(name).includes('boolean'))) return 'finish';
  if (has('source') || has('program')) return 'run_program';
  // Before `selector`: a screenshot tool may take one to crop to.
  if (/\bscreenshot\b/i.test(tool.description ?? '')) return has('ref') ? 'view_screenshot' : 'screenshot';
  if (has('selector')) return has('className') ? 'has_class' : has('value') || has('text') ? 'fill' : 'click';
  if (ADDRESS_PARAMS.some(([name]) => has(name))) return 'navigate';
  if (params.length > 0) return undefined;
  const readers: Array<[Move, RegExp]> = [...dialect.readers.map((reader): [Move, RegExp] => [reader.move, reader.describes]), ...READERS];
  return readers.find(([, pattern]) => pattern.test(tool.description ?? ''))?.[0];
}

export class Toolbox {
  private readonly tools: Capable[];
  private readonly named: boolean;

  /** `offered` absent: the request named no tools, and moves are called by their own names. */
  constructor(
    offered: readonly OfferedTool[] | undefined,
    readonly dialect: Dialect,
  ) {
    this.tools = (offered ?? []).flatMap(({ function: tool }) => {
      const move = moveOf(tool, dialect);
      return move ? [{ name: tool.name, move, params: Object.keys(tool.parameters?.properties ?? {}), description: tool.description ?? '' }] : [];
    });
    this.named = offered === undefined || offered.length === 0;
  }

  /** The move a call of this tool made, as the doubles think of it. */
  moveOf(name: string): Move | undefined {
    if (this.named) return name as Move;
    return this.tools.find((tool) => tool.name === name)?.move;
  }

  /** Whether some offered tool makes this move, or a program that a tool runs can. */
  offers(move: Move): boolean {
    return this.named || this.tools.some((tool) => tool.move === move) || this.programTool(move) !== undefined;
  }

  /** The program tool whose API can make this move (code mode's `run_program`), the parameter it takes the source in, and its API's description. */
  programTool(move: Move): { name: string; param: string; api: string } | undefined {
    const tool = this.tools.find((one) => one.move === 'run_program' && programOf(move, one.description, this.dialect) !== undefined);
    return tool && { name: tool.name, param: tool.params.includes('source') ? 'source' : 'program', api: tool.description };
  }

  /** The offered tool for a move, and its parameters. */
  toolFor(move: Move): { name: string; params: string[] } | undefined {
    if (this.named) return { name: move, params: [] };
    return this.tools.find((tool) => tool.move === move);
  }

  /** The offered tools and the moves they make, for an error message. */
  describe(): string {
    return this.named ? 'none, so moves are called by name' : this.tools.map((tool) => `${tool.name}: ${tool.move}`).join(', ') || 'none this double can use';
  }

  /** The page readers, the dialect's first: where the agent offers no tool for one, another stands in. */
  pageReaders(): Move[] {
    return [...this.dialect.readers.map((reader) => reader.move), 'get_text'];
  }

  /** How a page-opening tool wants an address: the parameter, and whether it takes a path. */
  addressParam(params: readonly string[]): [name: string, path: boolean] {
    return ADDRESS_PARAMS.find(([name]) => params.includes(name)) ?? ['url', false];
  }
}

/** A double's move with its arguments, in its own words. */
export interface Action {
  name: string;
  args: Record<string, unknown>;
}

/** `address` on `from` (a page, or a path resolved there) as the same page on `to`; an address elsewhere stays as it is. */
export function rebase(address: string, from: string, to: string): string {
  const target = new URL(address, from);
  return target.origin === new URL(from).origin ? new URL(`${target.pathname}${target.search}${target.hash}`, to).href : target.href;
}

/**
 * A call the agent made, as the move the double meant: a page opened on the agent's origin (or by
 * its path) is that page on the site's own, a page that is a move of the kit's own is that move
 * (Dialect.moveAt), and a filled text is a `value`, whatever the tool calls its parameters. So a
 * double knows its own moves again, whatever tool shape made them.
 */
export function ownMove(name: string, args: Record<string, unknown>, tools: Toolbox, origin: string): { name: Move | undefined; args: Record<string, unknown> } {
  const move = tools.moveOf(name);
  if (move === 'navigate') {
    const address = ADDRESS_PARAMS.map(([param]) => args[param]).find((value): value is string => typeof value === 'string');
    if (address === undefined || !URL.canParse(address, origin)) return { name: move, args };
    const url = rebase(address, origin, tools.dialect.site);
    return tools.dialect.moveAt?.(new URL(url)) ?? { name: move, args: { url } };
  }
  if (move === 'fill') return { name: move, args: { selector: args.selector, value: args.value ?? args.text } };
  return { name: move, args };
}

/**
 * A move as a program, for an agent whose only tool for it runs one (code mode's `run_program`):
 * the program makes the move with the functions the tool's description lists and answers what the
 * move's own tool would. Its first line names the move, so the double reads the call back as that
 * move, and the program's value as the move's result.
 */

const js = (value: unknown) => JSON.stringify(value) ?? 'undefined';

/** A program's body that reads the page as `get_text` does: where the browser is, and the page's text. */
export const READ_TEXT = 'return { url: await browser.url(), text: await browser.text() };';

/** A move's program: the functions it calls (as the API's description writes them) and its body. */
export interface Program {
  calls: string[];
  body: (args: Record<string, unknown>) => string;
}

/** Each move's programs, the first whose functions the description lists wins (a dialect's readers bring their own). */
const PROGRAMS: Partial<Record<Move, Program[]>> = {
  navigate: [{ calls: ['browser.navigate('], body: ({ url }) => `return await browser.navigate(${js(url)});` }],
  click: [{ calls: ['browser.click('], body: ({ selector }) => `return await browser.click(${js(selector)});` }],
  fill: [{ calls: ['browser.fill('], body: ({ selector, value }) => `return await browser.fill(${js(selector)}, ${js(value)});` }],
  get_text: [{ calls: ['browser.url(', 'browser.text('], body: () => READ_TEXT }],
  current_url: [{ calls: ['browser.url('], body: () => 'return { url: await browser.url() };' }],
  has_class: [{ calls: ['browser.hasClass('], body: ({ selector, className }) => `return { present: await browser.hasClass(${js(selector)}, ${js(className)}) };` }],
  // The API's finish takes no evidence: a program's calls are not the model's to cite.
  finish: [{ calls: ['finish('], body: ({ success, summary, answer }) => `await finish(${[success, summary, ...(answer === undefined ? [] : [answer])].map(js).join(', ')});` }],
};

const MARK = '// move: ';

const programOf = (move: Move, api: string, dialect: Dialect) =>
  (dialect.readers.find((reader) => reader.move === move)?.programs ?? PROGRAMS[move])?.find((program) => program.calls.every((call) => api.includes(call)));

/**
 * The program that makes the double's move `action` with the API `api` describes, given the
 * arguments as the agent's tools take them (an address on the agent's origin); undefined when it cannot.
 */
export function programFor(action: Action, args: Record<string, unknown>, api: string, dialect: Dialect): string | undefined {
  const program = programOf(action.name as Move, api, dialect);
  return program && `${MARK}${JSON.stringify(action)}\n${program.body(args)}`;
}

/** A program a double wrote for one move, read back as that move with the result its own tool would have answered; undefined for any other program. */
export function programmedMove(source: unknown, result: Record<string, unknown>): { action: Action; result: Record<string, unknown> } | undefined {
  if (typeof source !== 'string' || !source.startsWith(MARK)) return undefined;
  const written = parseJsonObject(source.slice(MARK.length, source.indexOf('\n')));
  if (typeof written?.name !== 'string' || typeof written.args !== 'object' || written.args === null) return undefined;
  const action = { name: written.name, args: written.args as Record<string, unknown> };
  // A call refused before its program ran answers no value: as it came.
  if (!('ok' in result)) return { action, result };
  const { ok, value, error } = result;
  return { action, result: ok === false ? { error } : typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value } };
}
