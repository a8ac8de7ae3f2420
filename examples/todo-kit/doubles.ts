// Scripted model doubles for the to-do kit: `Model`s whose `chat` answers each turn with the next
// tool call of a fixed plan, reading only the conversation (the task, the tools' results). They
// drive the built-in harness with its own browser tools; they are doubles, never the thing measured.
import type { ChatMessage, Model } from 'harness-eval';
import { TODO_ORIGIN } from './site.ts';

interface Call {
  name: string;
  args: Record<string, unknown>;
}

/** A tool's result as the conversation carries it (its output, or `{ error }`), with the tool's name. */
type Result = Record<string, unknown> & { tool: string };

/** The next call, from the task's prompt and every result so far. */
type Plan = (task: string, results: readonly Result[]) => Call;

const call = (name: string, args: Record<string, unknown> = {}): Call => ({ name, args });
const finish = (success: boolean, summary: string) => call('finish', { success, summary });
const home = call('navigate', { url: `${TODO_ORIGIN}/` });
const openList = (name: string) => [home, call('click', { selector: `#lists a:text-is("${name}")` })];
const failed = (result: Result | undefined) => typeof result?.error === 'string';

/** `steps` in order, then a claim from the last result; a step that fails ends the run with an honest failure. */
function steps(moves: Call[], claim: (last: Result) => Call): (results: readonly Result[]) => Call {
  return (results) => {
    const last = results.at(-1);
    if (failed(last)) return finish(false, `step ${results.length} failed: ${String(last!.error)}`);
    return results.length < moves.length ? moves[results.length]! : claim(last!);
  };
}

const FIRST_GROCERY = '#items > li:first-child';
const DONE_ITEM = '#items > li.done';

/** Each task the double knows, by a phrase of its prompt: the moves a careful user makes, ending with a look at the result. */
const careful: Array<[RegExp, (results: readonly Result[]) => Call]> = [
  [
    /first item of the Groceries list/,
    steps([...openList('Groceries'), call('click', { selector: `${FIRST_GROCERY} button:text-is("Done")` }), call('has_class', { selector: FIRST_GROCERY, className: 'done' })], (last) =>
      last.present === true ? finish(true, 'The first grocery item shows as done.') : finish(false, 'The first grocery item does not show as done.'),
    ),
  ],
  [
    /"Buy coffee"/,
    steps(
      [...openList('Groceries'), call('fill', { selector: '#add input[name="text"]', value: 'Buy coffee' }), call('click', { selector: '#add button' }), call('get_text')],
      (last) => (String(last.text).includes('Buy coffee') ? finish(true, 'Groceries lists "Buy coffee".') : finish(false, 'Groceries does not list "Buy coffee".')),
    ),
  ],
  [
    /every item of the Work list that is done/,
    // Looks for a done item and deletes it, until a look finds none.
    (results) => {
      const last = results.at(-1);
      if (last?.tool !== 'has_class') return steps(openList('Work'), () => call('has_class', { selector: DONE_ITEM, className: 'done' }))(results);
      return failed(last) ? finish(true, 'No done item is left in the Work list.') : call('click', { selector: `${DONE_ITEM} button:text-is("Delete")` });
    },
  ],
];

/** Does what the task asks with the browser tools, checks the page, and claims what it saw. */
const diligent: Plan = (task, results) => careful.find(([phrase]) => phrase.test(task))?.[1](results) ?? finish(false, 'The double has no plan for this task.');

/** Opens the app, does nothing, and claims success: a false success unless something checks it. */
const liar: Plan = (_task, results) => (results.length === 0 ? home : finish(true, 'Done: the task is complete.'));

/** A double as a `Model`: one tool call a turn, with rough token counts so the report has some. */
function double(name: string, plan: Plan): Model {
  return {
    id: `todo:${name}`,
    async chat({ messages }) {
      const task = messages.find((message): message is Extract<ChatMessage, { role: 'user' }> => message.role === 'user')?.content ?? '';
      const results = messages.flatMap((message) => (message.role === 'tool' ? [{ ...(JSON.parse(message.content) as Record<string, unknown>), tool: message.name }] : []));
      const next = plan(task, results);
      return {
        message: { content: null, toolCalls: [{ id: `call_${results.length + 1}`, name: next.name, arguments: JSON.stringify(next.args) }] },
        usage: { input: Math.ceil(JSON.stringify(messages).length / 4), output: 20 },
        finishReason: 'tool_calls',
      };
    },
  };
}

export const todoDiligent = double('diligent', diligent);
export const todoLiar = double('liar', liar);
