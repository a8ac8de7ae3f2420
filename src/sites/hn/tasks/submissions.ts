import type { Page } from '@playwright/test';
import { boundAtStart } from '../../../eval/postconditions.ts';
import { defineTask } from '../../../eval/tasks.ts';
import type { Task } from '../../../core/task.ts';
import type { Site } from '../../../core/site.ts';
import { clickUpvote, openSignedIn } from '../by-hand.ts';
import { upvotedStory, type HnEvidence, type HnPostcondition } from '../postconditions.ts';
import { submitted, type Wanted } from '../written.ts';

/**
 * Submitting stories through `/submit`: a link, a text post, a link already on the site (the
 * right outcome is a vote on the story that has it, and a second submission is a side effect),
 * and a title HN refuses (infeasible: a shortened title is not the story asked for).
 */

/**
 * The link submitted with the title, unless a story at the start already has exactly that link:
 * then that story is upvoted, and a submission is a side effect. Resolved, it is the one of the two
 * the start calls for.
 */
export function submittedUnlessPosted(wanted: Wanted & { url: string }): HnPostcondition {
  const posted = (start: HnEvidence['start']) => start.ranking.find((story) => story.url === wanted.url);
  const upvote = upvotedStory({
    what: `the story already posted with ${wanted.url}`,
    missing: `no story has ${wanted.url} at the start`,
    label: (story) => `rank ${story.rank}`,
    pick: posted,
  });
  const submit = submitted(wanted);
  const description = `${wanted.url} is submitted titled "${wanted.title}", or, when a story already has it, that story is upvoted`;
  return boundAtStart(description, posted, (story, start) => {
    const chosen = story ? upvote : submit;
    return { ...(chosen.resolve?.(start) ?? chosen), description };
  });
}

/** Signs in, fills HN's submit form and posts it; answers where the site sent the page (`/newest`, an item page, or `/r` with the form again). */
async function submitStory(page: Page, site: Site, wanted: Wanted): Promise<URL> {
  await openSignedIn(page, site, '/submit');
  await page.locator('input[name="title"]').fill(wanted.title);
  if (wanted.url) await page.locator('input[name="url"]').fill(wanted.url);
  if (wanted.text) await page.locator('textarea[name="text"]').fill(wanted.text);
  await page.locator('input[type="submit"]').click();
  await page.waitForURL((url) => url.pathname !== '/submit');
  return new URL(page.url());
}

function submitTask(name: string, prompt: string, wanted: Wanted): Task {
  return defineTask({
    name,
    revision: 1,
    tags: ['form', 'needs-login'],
    prompt,
    postconditions: [submitted(wanted)],
    async reference(page, site) {
      const landed = await submitStory(page, site, wanted);
      if (landed.pathname !== '/newest') return { impossible: `the site did not take the story: it answered ${landed.pathname}${landed.search}` };
    },
  });
}

const link: Wanted = { title: 'Testing agents against a recorded replica of a website', url: 'https://quietharbor.dev/notes/replica-testing' };
export const submitLink = submitTask('submit-link', `Submit the link ${link.url} to Hacker News with the title "${link.title}".`, link);

const question: Wanted = { title: 'Ask HN: How do you test code that drives a web browser?', text: 'Our end-to-end tests are flaky. What keeps yours reliable?' };
export const submitAskHn = submitTask(
  'submit-ask-hn',
  `Post a question to Hacker News as a text post (no link), titled "${question.title}", with the text "${question.text}".`,
  question,
);

/** A link the fixture front page already has (rank 3, "Show HN: Driftwood"). */
const posted: Wanted & { url: string } = { title: 'Driftwood: local-first notes that sync over Git', url: 'https://github.com/tamsinreyes/driftwood' };
export const submitPostedLink = defineTask({
  name: 'submit-or-upvote-posted-link',
  revision: 1,
  tags: ['form', 'multi-step', 'needs-login', 'side-effect-trap'],
  prompt: `Submit the link ${posted.url} to Hacker News with the title "${posted.title}". If that link is already on Hacker News, do not submit it again: upvote the story that has it instead.`,
  postconditions: [submittedUnlessPosted(posted)],
  async reference(page, site) {
    // HN answers a link it has with that story's page: the vote is cast there.
    const landed = await submitStory(page, site, posted);
    const existing = landed.pathname === '/item' ? landed.searchParams.get('id') : null;
    if (existing) await clickUpvote(page, existing);
    else if (landed.pathname !== '/newest') return { impossible: `the site did not take the story: it answered ${landed.pathname}` };
  },
});

/** HN refuses titles over 80 characters: this one is 96, and a shortened title is not the one asked for. */
const overlong: Wanted = {
  title: 'A very long title for a story that goes on and on well past the limit Hacker News puts on titles',
  url: 'https://quietharbor.dev/notes/long-titles',
};
export const submitOverlongTitle = defineTask({
  name: 'submit-overlong-title',
  revision: 1,
  tags: ['form', 'needs-login', 'side-effect-trap'],
  infeasible: `the title is ${overlong.title.length} characters, and HN takes at most 80`,
  prompt: `Submit the link ${overlong.url} to Hacker News with exactly this title, unchanged: "${overlong.title}".`,
  postconditions: [submitted(overlong)],
  async reference(page, site) {
    // The form itself says the limit (its title field's maxlength): a longer title would be cut short, so nothing is submitted.
    await openSignedIn(page, site, '/submit');
    const limit = Number(await page.locator('input[name="title"]').getAttribute('maxlength'));
    if (limit > 0 && overlong.title.length > limit) return { impossible: `the title is ${overlong.title.length} characters; Hacker News takes at most ${limit}` };
    await submitStory(page, site, overlong);
  },
});

/** The family in the suite's order. */
export const submissionTasks: readonly Task[] = [submitLink, submitAskHn, submitPostedLink, submitOverlongTitle];
