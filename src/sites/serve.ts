import type { Site } from './site.ts';

export interface SiteServer {
  /** `http://127.0.0.1:PORT`: the site over plain HTTP. */
  url: string;
  close(): Promise<void>;
}

/** CONTRACT STUB (helper C implements): any site over HTTP on 127.0.0.1, through `site.fetch` (the replica, or a forwarder to the live site). */
export async function serveSite(_site: Site): Promise<SiteServer> {
  throw new Error('serveSite: not implemented yet');
}
