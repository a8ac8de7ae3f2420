/** HN's pages the doubles open, on the site's own origin (the doubles' moves are src/doubles/moves.ts). */

export const FRONT_PAGE = 'https://news.ycombinator.com/news';

export const itemAddress = (id: string) => `https://news.ycombinator.com/item?id=${id}`;
