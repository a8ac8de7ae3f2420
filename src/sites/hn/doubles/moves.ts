import { HN_ORIGIN } from '../options.ts';

/** HN's pages the doubles open, on the site's own origin (the doubles' moves are src/doubles/moves.ts). */

export const FRONT_PAGE = `${HN_ORIGIN}/news`;

export const itemAddress = (id: string) => `${HN_ORIGIN}/item?id=${id}`;
