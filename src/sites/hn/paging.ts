/** Hacker News lists 30 stories a page: page 1 of the front page is ranks 1 to 30, page 2 ranks 31 to 60. */
export const PAGE_SIZE = 30;

/** The page of a listing that shows `rank`. */
export const pageOfRank = (rank: number) => Math.ceil(rank / PAGE_SIZE);

/** The rank of the first story on page `page`. */
export const firstRankOn = (page: number) => (page - 1) * PAGE_SIZE + 1;
