import { upvoteFirstPostTest } from './upvote.ts';

// `npm run bench:matrix`'s project-per-cell layout (BENCH_LAYOUT=projects): each project is a cell.
upvoteFirstPostTest();
