import { loginPage, notices } from './pages.ts';
import { formOf, html, redirect, safeGoto, typedText, type Pages, type Routes, type Visitor } from './routing.ts';
import type { HnComment } from './snapshot.ts';
import type { HnState, UserList } from './state.ts';
import { commentItem, commentRow, encodeGoto, type PageView } from './template.ts';

/**
 * Comments, as on HN: the reply page (`/reply?id=`), posting a comment or a reply (`POST /comment`
 * with the form's `hmac`), and a user's comments (`/threads?id=`). A new comment shows on its item
 * page (the template's `thread` slots) and adds one to its story's count everywhere.
 */

/** What HN answers a reply to a dead item (the replica's wording: HN offers no reply link to one). */
const cantReply = "You can't reply to that item.";

/**
 * The replica's comments as a page sees them: the replies under an item, newest first, and how many
 * live ones a story gained (HN's count leaves dead ones out). A page asks for every row's count and
 * every comment's replies, so the comments are grouped once, on the first question.
 */
export function commentViews(state: HnState): Pick<PageView, 'replies' | 'commentsAdded'> {
  let grouped: { replies: Map<string, HnComment[]>; added: Map<string, number> } | undefined;
  const group = () => {
    const replies = new Map<string, HnComment[]>();
    const added = new Map<string, number>();
    for (const comment of [...state.posts.comments].reverse()) {
      const siblings = replies.get(comment.parent);
      if (siblings) siblings.push(comment);
      else replies.set(comment.parent, [comment]);
      if (!comment.dead) added.set(comment.story, (added.get(comment.story) ?? 0) + 1);
    }
    return { replies, added };
  };
  return {
    replies: (parent) => (grouped ??= group()).replies.get(parent) ?? [],
    commentsAdded: (id) => (grouped ??= group()).added.get(id) ?? 0,
  };
}

export function commentRoutes({ capture, state, page }: Pages): Routes {
  /** Every comment: the capture's, then the replica's in the order written. */
  const commentNamed = (id: string): HnComment | undefined => capture.comments.find((comment) => comment.id === id) ?? state.posts.comments.find((comment) => comment.id === id);
  /** What a comment can answer: a story with an item page, or a comment; undefined when there is no such item. */
  const parentNamed = (id: string): { story: string; comment?: HnComment } | undefined => {
    const comment = commentNamed(id);
    if (comment) return { story: comment.story, comment };
    const item = capture.items.get(id);
    return item?.kind === 'story' && capture.itemPage(id) ? { story: id } : undefined;
  };
  const titleOf = (story: string) => capture.items.get(story)?.title ?? '';

  /** The reply page: the parent comment, and a form whose `hmac` (the template fills it in) binds the reply to this user and parent. */
  const replyPage = (comment: HnComment, goto: string, visitor: Visitor): Response => {
    const path = `reply?id=${comment.id}&goto=${encodeGoto(goto)}`;
    return page(capture.framePage('reply', 'Add Comment', path, commentItem(comment, titleOf(comment.story), { goto })), visitor);
  };

  return {
    '/reply': {
      GET(_, url, visitor) {
        const id = url.searchParams.get('id') ?? '';
        const comment = commentNamed(id);
        if (!comment) return html(notices.noSuchItem);
        const goto = url.searchParams.has('goto') ? safeGoto(url.searchParams.get('goto')) : `item?id=${comment.story}#${id}`;
        if (!visitor.session) return html(loginPage(`reply?id=${id}&goto=${encodeGoto(goto)}`));
        if (comment.dead) return html(cantReply);
        return replyPage(comment, goto, visitor);
      },
    },
    '/comment': {
      /**
       * A comment (on a story) or a reply (to a comment): logged out, the login page; an unknown or
       * dead parent, a wrong `hmac` or an empty text change nothing. Done, back to `goto` at the new comment.
       */
      async POST(request, _, visitor) {
        const form = await formOf(request);
        const goto = safeGoto(form.get('goto'));
        const user = visitor.session?.user;
        if (!user) return html(loginPage(goto));
        const parentId = form.get('parent') ?? '';
        const parent = parentNamed(parentId);
        if (!parent) return html(notices.noSuchItem);
        // A dead comment, or a closed thread (its page offers no form): HN takes no reply.
        if (parent.comment?.dead || capture.items.get(parent.story)?.closed) return html(cantReply);
        if (form.get('hmac') !== state.authToken(user, parentId)) return html(notices.unknown);
        const text = typedText(form, 'text');
        if (!text) return redirect(goto);
        const id = state.newId();
        state.posts.comments.push({ id, parent: parentId, story: parent.story, by: user, text });
        return redirect(`${goto.replace(/#.*/, '')}#${id}`);
      },
    },
    '/threads': {
      /** A user's comments, newest first: those written on the replica, then the capture's. Public, as on HN. */
      GET(_, url, visitor) {
        const user = url.searchParams.get('id') ?? '';
        const theirs = (comments: readonly HnComment[]) => comments.filter((comment) => comment.by === user);
        const comments = [...theirs(state.posts.comments).reverse(), ...theirs(capture.comments)];
        if (!state.accounts.has(user) && comments.length === 0) return html(notices.noSuchUser);
        return commentListPage({ capture, page }, comments, `${user}'s comments`, `threads?id=${user}`, visitor);
      },
    },
  };
}

/**
 * Comments as HN lists them apart from their threads (`/threads?id=`, and `comments=t` of
 * `/upvoted` and `/favorites`): a row each, naming its parent and its story, in the news frame.
 */
export function commentListPage({ capture, page }: Pick<Pages, 'capture' | 'page'>, comments: readonly HnComment[], title: string, goto: string, visitor: Visitor): Response {
  const rows = comments.map((comment) => commentRow(capture.style, comment, { on: capture.items.get(comment.story)?.title ?? '' })).join('');
  const tree = `<tr><td><table border="0" class="comment-tree">${rows}</table></td></tr>`;
  return page(capture.framePage('threads', title, goto, tree), visitor);
}

/** The comments (the capture's and those written on the replica) in `user`'s `list`, newest first. */
export function commentsIn({ capture, state }: Pick<Pages, 'capture' | 'state'>, list: UserList, user: string): HnComment[] {
  return [...[...state.posts.comments].reverse(), ...capture.comments].filter((comment) => state.has(list, user, comment.id));
}
