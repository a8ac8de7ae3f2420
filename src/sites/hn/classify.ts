import type { SiteAction, SiteRequest } from '../../core/site.ts';

/**
 * What a request does to Hacker News: the one place that knows HN's action URLs. A vote, hide, fave or
 * flag is a GET link (`vote?id=…&how=up`, `hide?id=…&un=t`); a comment, a submission, a profile
 * edit and a login are form posts. Anything else only reads.
 */
export function classifyHn(request: SiteRequest): SiteAction | undefined {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return undefined;
  }
  const query = url.searchParams;
  const id = query.get('id') ?? '';
  const method = request.method.toUpperCase();
  const undo = query.get('un') === 't';
  if (method === 'GET') {
    switch (url.pathname) {
      case '/vote': {
        const vote = voteOf(query);
        if (vote.how !== 'up' && vote.how !== 'un') return undefined;
        return action(vote.how === 'up' ? 'vote' : 'unvote', vote.id);
      }
      // HN's script hides in the background (`snip-story`); without it, the `hide` link redirects.
      case '/hide':
      case '/snip-story':
        return action(undo ? 'unhide' : 'hide', id);
      case '/fave':
        return action(undo ? 'unfave' : 'fave', id);
      case '/flag':
        return action(undo ? 'unflag' : 'flag', id);
      case '/logout':
        return { kind: 'logout', detail: 'log out' };
      default:
        return undefined;
    }
  }
  if (method !== 'POST') return undefined;
  const form = new URLSearchParams(request.body ?? '');
  switch (url.pathname) {
    case '/comment':
      return action('comment', form.get('parent') ?? '');
    case '/r':
      return { kind: 'submit', detail: 'submit a story' };
    case '/xuser':
      return action('profile', form.get('id') ?? '');
    case '/login': {
      // Logging in from a vote's login wall completes the vote in its `goto`: the post is that vote.
      const pending = classifyHn({ method: 'GET', url: new URL(form.get('goto') ?? 'news', url).href });
      if (pending?.kind === 'vote' || pending?.kind === 'unvote') return { ...pending, detail: `log in, then ${pending.detail}` };
      return { kind: 'login', detail: 'log in' };
    }
    default:
      return undefined;
  }
}

/**
 * A vote link's parameters: `id`, `how` and `goto`, or before 2014 news.arc's `for`, `dir` and
 * `whence` (and `by`, the voter's name, which must be the one logged in).
 */
export function voteOf(query: URLSearchParams): { id: string; how: string | null; goto: string | null; by: string | null } {
  return { id: query.get('id') ?? query.get('for') ?? '', how: query.get('how') ?? query.get('dir'), goto: query.get('goto') ?? query.get('whence'), by: query.get('by') };
}

function action(kind: string, target: string): SiteAction {
  return { kind, target, detail: `${kind} on ${target || '(no id)'}` };
}
