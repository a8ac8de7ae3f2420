import type { Item, StoryRow } from './capture.ts';
import { notices } from './pages.ts';
import { PAGE_SIZE } from './paging.ts';
import { html, pageNumberOf, type Pages, type Routes, type Visitor } from './routing.ts';
import { submittedStories } from './submissions.ts';

/**
 * HN's other story listings, derived from the capture's front-page rows and the stories submitted
 * on the replica: `/newest`, `/ask`, `/show`, `/jobs`, `/from?site=`, `/submitted?id=`. Each is
 * paged as HN pages (30 rows, `p=2`, a `More` link while there are more), numbers its rows as
 * shown, keeps the rows' logged-in slots and leaves out what the visitor hid, as `/news` does.
 */

/** Rows on one page of a listing, as on HN. */

/** A story row with the facts a listing picks and orders by. */
interface Listed {
  row: StoryRow;
  item: Item;
}

/** HN's ids only grow: newest first is by id, largest first. */
const newestFirst = (a: Listed, b: Listed) => Number(b.item.id) - Number(a.item.id);

/** A listing: its page title and the stories it lists in order, or an answer of its own (an unknown user). */
type Listing = (url: URL, stories: readonly Listed[], isAccount: (user: string) => boolean) => { title: string; listed: Listed[] } | Response;

const titled = (prefix: string) => (story: Listed) => story.item.title?.startsWith(prefix) ?? false;

/** Captured stories in rank order first, then those submitted, newest first: `/ask` and `/show` rank, and a fresh story ranks low. */
const ranked = (stories: readonly Listed[]) => [...stories.filter((story) => story.item.rank !== undefined), ...stories.filter((story) => story.item.rank === undefined).sort(newestFirst)];

const listings: Record<string, Listing> = {
  '/newest': (_, stories) => ({ title: 'New Links', listed: [...stories].sort(newestFirst) }),
  '/ask': (_, stories) => ({ title: 'Ask', listed: ranked(stories.filter(titled('Ask HN'))) }),
  '/show': (_, stories) => ({ title: 'Show', listed: ranked(stories.filter(titled('Show HN'))) }),
  '/jobs': (_, stories) => ({ title: 'jobs', listed: stories.filter((story) => story.item.job) }),
  // The site as HN shows it after the title, exactly: `github.com` does not list `github.com/user`'s stories.
  '/from': (url, stories) => {
    const site = url.searchParams.get('site') ?? '';
    return { title: `Stories from ${site}`, listed: stories.filter((story) => story.item.site === site).sort(newestFirst) };
  },
  // A user is known by an account here or a story the capture shows they posted.
  '/submitted': (url, stories, isAccount) => {
    const user = url.searchParams.get('id') ?? '';
    const listed = stories.filter((story) => story.item.author === user).sort(newestFirst);
    if (listed.length === 0 && !isAccount(user)) return html(notices.noSuchUser);
    return { title: `${user}'s submissions`, listed };
  },
};

export function listingRoutes(pages: Pages): Routes {
  const { capture, state } = pages;

  /** The front pages' rows in rank order, with their items: the capture's, the same for every request. */
  const captured: Listed[] = [...capture.storyRows.values()].flatMap((row) => {
    const item = capture.items.get(row.id);
    return item ? [{ row, item }] : [];
  });
  /** Every story a listing can show: the captured ones, then the submitted ones. */
  const stories = (): Listed[] => [...captured, ...submittedStories(pages)];

  const answer = (path: string, listing: Listing) => (_: Request, url: URL, visitor: Visitor) => {
    const picked = listing(url, stories(), (user) => state.accounts.has(user));
    if (picked instanceof Response) return picked;
    const user = visitor.session?.user;
    const shown = picked.listed.filter((story) => !user || !state.has('hidden', user, story.item.id));
    const pageNumber = pageNumberOf(url);
    const first = (pageNumber - 1) * PAGE_SIZE;
    const rows = shown.slice(first, first + PAGE_SIZE).map((story) => story.row);
    const at = (n: number) => {
      const query = new URLSearchParams(url.searchParams);
      query.delete('p');
      if (n > 1) query.set('p', String(n));
      const search = query.toString();
      return `${path.slice(1)}${search ? `?${search}` : ''}`;
    };
    const more = shown.length > first + PAGE_SIZE ? at(pageNumber + 1) : undefined;
    return pages.page(capture.listing(picked.title, at(pageNumber), rows, first + 1, more), visitor);
  };

  return Object.fromEntries(Object.entries(listings).map(([path, listing]) => [path, { GET: answer(path, listing) }]));
}
