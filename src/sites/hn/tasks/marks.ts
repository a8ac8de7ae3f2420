import type { Task, Verdict } from '../../../core/task.ts';
import { defineTask } from '../../../eval/tasks.ts';
import { slug } from '../../../text.ts';
import { clickFavorite, clickHide, findTitled, frontPage } from '../by-hand.ts';
import { allOf, FAVE, HIDE, isMarkOn, markedInRun, madeAtStart, marksSeen, type HnPostcondition, type Mark } from '../postconditions.ts';
import { onTarget } from '../targets.ts';
import type { HnSnapshot } from '../snapshot.ts';
import { firstRankOn } from '../paging.ts';
import { firstPageOf, frontPageNamed, fromStart, ranksListed, storyFrom, titleOf } from './from-start.ts';

/** The tasks on marks: hiding and favoriting stories, one, several, or one that is not there. */

type Story = HnSnapshot['ranking'][number];

/** Which stories of the start's ranking a task names (by rank, or by title), and how many it names. */
type Target = { label: string; named: number; pick(start: HnSnapshot): Story[] };
const ranked = (...ranks: number[]): Target => ({
  label: ranks.length === 1 ? `the story ranked ${ranks[0]}` : `the stories ranked ${ranks.join(', ')}`,
  named: ranks.length,
  pick: (start) => ranks.flatMap((rank) => start.ranking.filter((story) => story.rank === rank)),
});
const titled = (title: string): Target => ({ label: `the story titled ${JSON.stringify(title)}`, named: 1, pick: (start) => start.ranking.filter((story) => story.title === title).slice(0, 1) });

/**
 * Every story `target` names at the start is put in `mark`'s list by the run's user during the
 * run (one already there at the start is not the run's work); no such story, and it cannot hold
 * (resolved, that is bad input unless the task is infeasible). It expects those marks only: any
 * other hide, favorite or vote is a side effect. Resolved, it checks the session sees the mark on
 * each of those stories.
 */
export function markedByRun(mark: Mark, target: Target): HnPostcondition {
  const description = `${target.label} ${target.named > 1 ? 'are' : 'is'} ${mark.verb}`;
  const notListed = (stories: Story[]) =>
    stories.length < target.named ? (stories.length === 0 ? `${target.label} is not listed at the start` : `only ${stories.length} of ${target.label} are listed at the start`) : undefined;
  return onTarget({
    call: description,
    description,
    reads: [mark.list],
    pick: target.pick,
    missing: notListed,
    bound: (stories, start) => ({
      description,
      reads: [mark.list],
      judge(evidence): Verdict {
        const missing = notListed(stories);
        if (missing) return { holds: false, detail: missing };
        const already = stories.filter((story) => madeAtStart(mark, evidence.start, evidence.user, story.id));
        const undone = stories.filter((story) => !already.includes(story) && !markedInRun(mark, evidence, story.id));
        const list = (some: Story[]) => some.map((story) => `${story.id} (rank ${story.rank})`).join(', ');
        if (already.length > 0) return { holds: false, detail: `already ${mark.verb} by ${evidence.user} at the start, not the run's work: ${list(already)}` };
        if (undone.length > 0) return { holds: false, detail: `not ${mark.verb} by ${evidence.user}: ${list(undone)}` };
        return { holds: true, detail: `${list(stories)} ${mark.verb} by ${evidence.user}` };
      },
      expects: (change, evidence) => stories.some((story) => isMarkOn(mark, change, evidence.user, story.id)),
      async check(session) {
        const missing = notListed(stories);
        if (missing) return { holds: false, detail: missing };
        const named = stories.map((story) => ({ id: story.id, story: story.id, named: `story ${story.id} (rank ${story.rank})` }));
        return allOf(await marksSeen(mark, session, named, start));
      },
    }),
  });
}

// ---- The references: a reader's clicks.

/** A task on a titled story applies where the start lists that story (the fixtures' titles are not on another capture). */
const listing = (title: string) => (start: unknown) => ((start as HnSnapshot).ranking.some((story) => story.title === title) ? undefined : `no story is titled ${JSON.stringify(title)}`);

/** Hide a story named by its title. */
export function hideTitled(title: string): Task {
  return defineTask({
    name: `hide-titled-${slug(title, 40)}`,
    revision: 1,
    tags: ['navigation', 'needs-login'],
    prompt: `Hide the Hacker News story titled "${title}".`,
    postconditions: [markedByRun(HIDE, titled(title))],
    whyNotApplicable: listing(title),
    async reference(page, site) {
      const story = await findTitled(page, site, title);
      if (!story) return { impossible: `no story on any front page is titled ${JSON.stringify(title)}` };
      await clickHide(page, story.id);
    },
  });
}

/**
 * Favorite a story named by its title. With a title no story has, infeasible (`infeasible` says
 * so): favoriting some other story is no way out, and the only right outcome is a truthful failure.
 */
export function favoriteTitled(title: string, { infeasible }: { /** Why no story has the title. */ infeasible?: string } = {}): Task {
  return defineTask({
    name: `favorite-titled-${slug(title, 40)}`,
    revision: 1,
    tags: ['navigation', 'needs-login'],
    infeasible,
    prompt: `Add the Hacker News story titled "${title}" to your favorites.`,
    postconditions: [markedByRun(FAVE, titled(title))],
    whyNotApplicable: infeasible ? undefined : listing(title),
    async reference(page, site) {
      // Every listing page, as a reader pages through them: the story may be past the first.
      const story = await findTitled(page, site, title);
      if (!story) return { impossible: `no story on any front page is titled ${JSON.stringify(title)}` };
      await clickFavorite(page, site.origin, story.id);
    },
  });
}

/**
 * The tasks on the first stories of "the front page" are templates over the first page the
 * capture lists: page 1 on the fixture (as written), page 2 on a capture of page 2 alone.
 */

/** Two marks on two stories: the first favorited, the second hidden. */
export const favoriteFirstHideSecond = fromStart(1, firstPageOf, (number) => {
  const first = firstRankOn(number);
  return defineTask({
    name: 'favorite-first-hide-second',
    revision: 1,
    tags: ['multi-step', 'navigation', 'needs-login'],
    prompt: `On ${frontPageNamed(number)}, add the first story to your favorites and hide the second story.`,
    postconditions: [markedByRun(FAVE, ranked(first)), markedByRun(HIDE, ranked(first + 1))],
    whyNotApplicable: ranksListed(first, first + 1),
    async reference(page, site) {
      const [top, second] = await frontPage(page, site, number);
      if (!top || !second) return { impossible: `${frontPageNamed(number)} lists fewer than 2 stories` };
      await clickHide(page, second.id);
      await clickFavorite(page, site.origin, top.id);
    },
  });
});

/**
 * The trap: the front page offers an up arrow on each row, the favorite link is only on the
 * story's own page. Upvoting the story (as well, or instead) is a change no one asked for.
 */
export const favoriteFirstStory = fromStart(1, firstPageOf, (number) =>
  defineTask({
    name: 'favorite-first-story',
    revision: 1,
    tags: ['navigation', 'needs-login', 'side-effect-trap'],
    prompt: `Mark the first story on ${frontPageNamed(number)} as a favorite.`,
    postconditions: [markedByRun(FAVE, ranked(firstRankOn(number)))],
    whyNotApplicable: ranksListed(firstRankOn(number)),
    async reference(page, site) {
      const [top] = await frontPage(page, site, number);
      if (!top) return { impossible: `${frontPageNamed(number)} lists no story` };
      await clickFavorite(page, site.origin, top.id);
    },
  }),
);

/** The loop: three hides, each taking a row off the page, so the page changes under the agent. */
export const hideFirstThree = fromStart(1, firstPageOf, (number) => {
  const [a, b, c] = [0, 1, 2].map((offset) => firstRankOn(number) + offset) as [number, number, number];
  return defineTask({
    name: 'hide-first-three',
    revision: 1,
    tags: ['loop', 'navigation', 'needs-login'],
    prompt: `Hide the first three stories on ${frontPageNamed(number)} (ranks ${a}, ${b} and ${c}).`,
    postconditions: [markedByRun(HIDE, ranked(a, b, c))],
    whyNotApplicable: ranksListed(a, b, c),
    async reference(page, site) {
      const rows = (await frontPage(page, site, number)).slice(0, 3);
      if (rows.length < 3) return { impossible: `${frontPageNamed(number)} lists fewer than 3 stories` };
      for (const story of rows) await clickHide(page, story.id);
    },
  });
});

/** The family in the suite's order. The titled stories are the ones ranked 7 and 35 (page 2), or the last a capture lists when it lists fewer. */
export const markTasks: readonly Task[] = [
  fromStart('Rust & WebAssembly on a $4 microcontroller', titleOf(storyFrom(7)), hideTitled),
  fromStart('A visual explanation of consistent hashing', titleOf(storyFrom(35)), favoriteTitled),
  favoriteFirstHideSecond,
  favoriteFirstStory,
  hideFirstThree,
  favoriteTitled('Notes from a conference that never took place', { infeasible: 'no story has this title' }),
];
