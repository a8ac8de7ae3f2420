import { upvoteFirstPostTest } from './upvote.ts';

// Each project of a matrix() is a cell (playwright.nightly.config.ts); specs/cells/ runs the main job's cells as tests instead.
upvoteFirstPostTest();
