import type { Page } from '@playwright/test';
import { z } from 'zod';
import type { SiteProgramApi } from '../../core/site.ts';
import { defineTool, type Tool } from '../../tools/registry.ts';

/** One story row as `get_stories` reads it, on every markup year the replica serves. */
const storyViewSchema = z.object({
  rank: z.number().nullable(),
  id: z.string(),
  title: z.string(),
  url: z.string().nullable(),
  points: z.number().nullable(),
  voted: z.boolean(),
  votable: z.boolean(),
});
type StoryView = z.infer<typeof storyViewSchema>;

/** HN's own tools, bound to the run's page: `get_stories` reads the listing the page shows. */
export function hnTools(page: Page): Tool[] {
  return [
    defineTool({
      name: 'get_stories',
      effect: 'read',
      description: 'The stories listed on the current Hacker News page: rank, id, title, url, points, voted.',
      parameters: z.object({}),
      output: z.object({ url: z.string(), stories: z.array(storyViewSchema) }),
      // Titles are written by whoever submitted the story.
      pageText: /^stories\.\d+\.title$/,
      async execute() {
        return { url: page.url(), stories: await page.evaluate(readStories) };
      },
    }),
  ];
}

/** HN's functions in code mode's programs. */
export const hnProgram: SiteProgramApi = {
  name: 'hn',
  functions: {
    stories: { tool: 'get_stories', field: 'stories', describe: '→ [{ rank, id, title, url, points, voted, votable }], the stories on the current Hacker News page' },
  },
};

/** Runs in the page: story rows of any HN markup year (2017 `a.storylink` … 2025 `span.titleline`). */
function readStories(): StoryView[] {
  return [...document.querySelectorAll('tr.athing:not(.comtr)')].map((row) => {
    const id = row.id;
    const link = row.querySelector<HTMLAnchorElement>('span.titleline > a, a.storylink');
    const rank = Number.parseInt(row.querySelector('span.rank')?.textContent ?? '', 10);
    const score = document.getElementById(`score_${id}`)?.textContent ?? '';
    const up = document.getElementById(`up_${id}`);
    return {
      rank: Number.isNaN(rank) ? null : rank,
      id,
      title: link?.textContent ?? '',
      url: link?.getAttribute('href') ?? null,
      points: score ? Number.parseInt(score, 10) : null,
      voted: up?.classList.contains('nosee') === true || document.getElementById(`un_${id}`) !== null,
      votable: up !== null,
    };
  });
}
