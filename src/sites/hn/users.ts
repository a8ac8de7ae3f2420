import { loginPage, notices } from './pages.ts';
import { formOf, html, redirect, typedText, type Pages, type Routes, type Visitor } from './routing.ts';
import { commentListPage, commentsIn } from './comments.ts';
import { commentHtml } from './template.ts';
import { escapeHtml } from '../../text.ts';

/**
 * The user pages: `/user?id=` (anyone's page; the account's own is its profile form), `POST
 * /xuser` (the profile form: the account edits its own `about`), and `/upvoted?id=` (the stories
 * the account upvoted, shown to the account only, as on HN).
 */

/** HN's answer to a list that is not the visitor's to see (another user's upvoted stories). */
const CANT_DISPLAY = "Can't display that.";

/**
 * Karma as HN counts it: 1 to start, plus every upvote the user's items received. A captured
 * story's points already hold its upvotes (and the poster's own point, which is not karma), so it
 * gives its points less one; every vote cast on the replica on the user's stories, comments and
 * submissions adds one. The top bar and the user page both show this. What the capture gives is
 * summed once per user here; each count then goes through the votes cast, not every item.
 */
export function karmaCounter({ capture, state }: Pick<Pages, 'capture' | 'state'>): (user: string) => number {
  const captured = new Map<string, number>();
  for (const { author, points } of capture.items.values()) if (author) captured.set(author, (captured.get(author) ?? 0) + (points ?? 1) - 1);
  return (user) => {
    const posted = new Set([...state.posts.comments, ...state.posts.submissions].flatMap((post) => (post.by === user ? [post.id] : [])));
    const theirs = (id: string) => {
      const item = capture.items.get(id);
      return item ? item.author === user : posted.has(id);
    };
    let karma = 1 + (captured.get(user) ?? 0);
    for (const ids of state.marks.votes.values()) for (const id of ids) if (theirs(id)) karma += 1;
    return karma;
  };
}

/** The token of the account's profile form, bound to the account. */
const profileHmac = (pages: Pages, user: string) => pages.state.authToken(user, 'xuser');

export function userRoutes(pages: Pages): Routes {
  const { capture, state } = pages;
  // Whoever the capture shows as a poster or commenter has a page, as the accounts do.
  const authors = new Set([...capture.items.values()].flatMap((item) => (item.author ? [item.author] : [])));
  const exists = (user: string) => state.accounts.has(user) || authors.has(user);

  const userPage = (url: URL, visitor: Visitor): Response => {
    const user = url.searchParams.get('id') ?? '';
    if (!exists(user)) return html(notices.noSuchUser);
    const about = state.posts.profiles[user]?.about ?? '';
    const own = visitor.session?.user === user;
    const name = escapeHtml(user);
    const row = (label: string, value: string) => `<tr><td valign="top">${label}</td><td>${value}</td></tr>`;
    const link = (href: string, text: string, note = '') => `<tr><td></td><td><a href="${href}"><u>${text}</u></a>${note}</td></tr>`;
    const rows = [
      row('user:', `<a href="user?id=${name}" class="hnuser">${name}</a>`),
      // Neither a capture nor the replica's account knows when an account was created.
      row('created:', 'unknown'),
      row('karma:', String(pages.karma(user))),
      own
        ? row('about:', `<textarea cols="60" rows="5" wrap="virtual" name="about">${escapeHtml(about)}</textarea>`)
        : row('about:', commentHtml(about)),
      link(`submitted?id=${name}`, 'submissions'),
      link(`threads?id=${name}`, 'comments'),
      ...(own ? [link('hidden', 'hidden'), link(`upvoted?id=${name}`, 'upvoted submissions', ' <span style="font-style:italic">(private)</span>')] : []),
      link(`favorites?id=${name}`, own ? 'favorite submissions' : 'favorites', own ? ' <span style="font-style:italic">(shared)</span>' : ''),
    ].join('\n');
    const table = `<table border="0">\n${rows}\n</table>`;
    const body = own
      ? `<form class="profileform" method="post" action="xuser"><input type="hidden" name="id" value="${name}"><input type="hidden" name="hmac" value="${profileHmac(pages, user)}">${table}<br><input type="submit" value="update"></form>`
      : table;
    return pages.page(capture.framePage('user', `Profile: ${user}`, `user?id=${user}`, `<tr id="bigbox"><td>${body}<br><br></td></tr>`), visitor);
  };

  /** The profile form's post: only the logged-in account, on itself, with its form's token; anything else changes nothing. */
  const editProfile = async (request: Request, visitor: Visitor): Promise<Response> => {
    const form = await formOf(request);
    const id = form.get('id') ?? '';
    const user = visitor.session?.user;
    if (!user) return html(loginPage(`user?id=${id}`));
    if (id !== user || form.get('hmac') !== profileHmac(pages, user)) return html(notices.unknown);
    state.posts.profiles[user] = { ...state.posts.profiles[user], about: typedText(form, 'about') };
    return redirect(`user?id=${user}`);
  };

  return {
    '/user': { GET: (_, url, visitor) => userPage(url, visitor) },
    '/xuser': { POST: (request, _, visitor) => editProfile(request, visitor) },
    '/upvoted': {
      GET(_, url, visitor) {
        const owner = url.searchParams.get('id') ?? '';
        const user = visitor.session?.user;
        if (!user) return html(loginPage(`upvoted?id=${owner}`));
        if (owner !== user) return html(CANT_DISPLAY);
        if (url.searchParams.get('comments') === 't') return commentListPage(pages, commentsIn(pages, 'votes', user), `${user}'s upvoted comments`, `upvoted?id=${user}&comments=t`, visitor);
        return pages.page(capture.listPage(`${user}'s upvoted submissions`, `upvoted?id=${user}`), visitor, (id) => state.has('votes', user, id));
      },
    },
  };
}
