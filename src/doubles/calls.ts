import type { History } from './history.ts';
import { urlIn } from './page.ts';
import { programFor, rebase, type Action, type Move } from './toolbox.ts';

/**
 * A double's move as a call of a tool the agent offers (see toolbox.ts): the doubles think on the
 * site's own origin (its dialect's `site`); a call goes where the agent reaches the site (its
 * loopback URL, or a path).
 */

/** The parameter a finishing tool takes its summary in: the first of these it has, else its first text parameter. */
const SUMMARY_PARAMS = ['summary', 'message', 'reason', 'details', 'explanation', 'text'];

/** The tool call that makes a double's move with the tools the agent offers (a tool of its own, else a program); an Error when none can. */
export function callFor(action: Action, history: History): Action {
  const call = direct(action, history) ?? programmed(action, history);
  if (!call) throw new Error(`no offered tool can ${action.name} ${JSON.stringify(action.args)} (offered: ${history.tools.describe()})`);
  return call;
}

/** The move as a program for the tool that runs one, its address on the agent's origin. */
function programmed(action: Action, history: History): Action | undefined {
  const tool = history.tools.programTool(action.name as Move);
  if (!tool) return undefined;
  const args = action.name === 'navigate' ? { url: rebase(String(action.args.url), history.tools.dialect.site, history.origin) } : action.args;
  const source = programFor(action, args, tool.api, history.tools.dialect);
  return source === undefined ? undefined : { name: tool.name, args: { [tool.param]: source } };
}

/** The call of the agent's own tool for the move, if it has one. */
function direct(action: Action, history: History): Action | undefined {
  const tools = history.tools;
  const { site, home } = tools.dialect;
  const open = (url: string): Action | undefined => {
    const tool = tools.toolFor('navigate');
    if (!tool) return undefined;
    const [param, path] = tools.addressParam(tool.params);
    const target = new URL(rebase(url, site, history.origin));
    return { name: tool.name, args: { [param]: path && target.origin === history.origin ? `${target.pathname}${target.search}` : target.href } };
  };
  const reread = () => open(history.steps.map((step) => urlIn(step.result)).findLast((url) => url !== undefined) ?? home);
  const as = (move: Move, args = action.args): Action | undefined => {
    const tool = tools.toolFor(move);
    return tool && { name: tool.name, args };
  };
  const readers = tools.pageReaders();
  const read = action.name as Move;
  // A read by the agent's tool for it, else by another page reader's, else by opening the page again.
  if (readers.includes(read)) return [read, ...readers.filter((other) => other !== read)].map((reader) => as(reader)).find((call) => call !== undefined) ?? reread();
  switch (action.name) {
    case 'navigate':
      return open(String(action.args.url));
    case 'click': {
      const link = tools.toolFor('click') ? undefined : tools.dialect.clickAt?.(String(action.args.selector), history.steps.map((step) => step.result), history.origin);
      return as('click') ?? (link === undefined ? undefined : open(link));
    }
    case 'fill': {
      // A filling tool takes the text as `value` or `text`, whichever it has.
      const tool = tools.toolFor('fill');
      const param = tool && !tool.params.includes('value') && tool.params.includes('text') ? 'text' : 'value';
      return as('fill', { selector: action.args.selector, [param]: action.args.value });
    }
    case 'finish': {
      const tool = tools.toolFor('finish');
      if (!tool) return undefined;
      const { success, summary, evidence, answer } = action.args;
      const text = SUMMARY_PARAMS.find((name) => tool.params.includes(name)) ?? tool.params.find((name) => name !== 'success' && name !== 'answer') ?? 'summary';
      const takes = (name: string) => tool.params.includes(name) || tool.params.length === 0;
      return { name: tool.name, args: { success, [text]: summary, ...(evidence !== undefined && takes('evidence') && { evidence }), ...(answer !== undefined && takes('answer') && { answer }) } };
    }
    default:
      return as(action.name as Move);
  }
}
