// Writes the recorded Hacker News pages under fixtures/hn/<year>/ from fixtures/hn/stories.json.
// Run with `npm run fixtures:hn`. The pages are logged-out views; the replica derives the
// logged-in and voted views from them, so every byte below follows real HN output of that year.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

type Year = 2017 | 2020 | 2025;
type Kind = "news" | "item";

interface Story {
  rank: number;
  id: number;
  type: "story" | "job";
  title: string;
  url?: string;
  site?: string;
  points?: number;
  user?: string;
  age: string;
  time: number;
  comments?: number;
}

interface Comment {
  id: number;
  user: string;
  age: string;
  time: number;
  indent: number;
  text: string;
  /** Killed: logged out with showdead off, HN shows it only because it has replies, as `[dead]`, with no vote arrow and no reply link. */
  dead?: boolean;
}

interface Fixtures {
  now: string;
  stories: Story[];
  comments: Record<string, Comment[]>;
}

interface Page {
  year: Year;
  kind: Kind;
  goto: string;
}

const YEARS: Year[] = [2017, 2020, 2025];
const PER_PAGE = 30;
const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "hn");

// HN's item page switched to a new, unindented generator (double-quoted rows, tr#bigbox,
// self-closed spacer rows) after the 2025 front page we follow was recorded; the only real
// logged-out item page we have is that newer one, so the 2025 item page follows it.
const compact = (p: Page): boolean => p.year === 2025 && p.kind === "item";

function escapeTitle(text: string, year: Year): string {
  const s = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  // Titles only gained entity-escaped apostrophes in later markup; 2017–2020 pages print them raw.
  return year === 2025 ? s.replace(/'/g, "&#x27;") : s;
}

/** Comment bodies are stored as HTML by HN, escaped at submission, paragraphs split by a bare <p>. */
function commentHtml(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((para) =>
      para.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;"),
    )
    .join("<p>");
}

const encodeGoto = (goto: string): string => encodeURIComponent(goto);
const isoUnix = (time: number): string => `${new Date(time * 1000).toISOString().slice(0, 19)} ${time}`;
/** Stand-in for HN's per-page tokens (fave auth, comment hmac): fixed 40-hex strings, never real ones. */
const token = (label: string, id: number): string => createHash("sha1").update(`${label}:${id}`).digest("hex");

// HN only started showing the owner part of github.com/someone style sites around 2021.
const siteFor = (site: string, year: Year): string => (year === 2025 ? site : site.split("/")[0]!);

function head(p: Page, title: string, itemId?: number): string {
  const pageTitle = p.kind === "item" ? `${escapeTitle(title, p.year)} | Hacker News` : "Hacker News";
  const meta = `<meta name="referrer" content="origin"><meta name="viewport" content="width=device-width, initial-scale=1.0"><link rel="stylesheet" type="text/css" href="news.css?v=1">`;
  const hnmain = `<body><center><table id="hnmain" border="0" cellpadding="0" cellspacing="0" width="85%" bgcolor="#f6f6ef">`;
  if (compact(p)) {
    return `<html lang="en" op="item"><head>${meta}<link rel="icon" href="y18.svg"><link rel="canonical" href="https://news.ycombinator.com/item?id=${itemId}"><title>${pageTitle}</title></head>${hnmain}`;
  }
  const html = p.year === 2025 ? `<html lang="en" op="${p.kind}">` : `<html op="${p.kind}">`;
  const icon = p.year === 2025 ? `<link rel="icon" href="y18.svg">` : `<link rel="shortcut icon" href="favicon.ico">`;
  const rssIndent = p.year === 2025 ? "                  " : "          ";
  const rss = p.kind === "news" ? `\n${rssIndent}<link rel="alternate" type="application/rss+xml" title="RSS" href="rss">` : "";
  return `${html}<head>${meta}\n        ${icon}${rss}\n        <title>${pageTitle}</title></head>${hnmain}\n`;
}

function navLinks(year: Year): string {
  const submit = year === 2025 ? `<a href="submit" rel="nofollow">submit</a>` : `<a href="submit">submit</a>`;
  if (year === 2017) {
    return `<a href="newest">new</a> | <a href="newcomments">comments</a> | <a href="show">show</a> | <a href="ask">ask</a> | <a href="jobs">jobs</a> | ${submit}`;
  }
  return `<a href="newest">new</a> | <a href="front">past</a> | <a href="newcomments">comments</a> | <a href="ask">ask</a> | <a href="show">show</a> | <a href="jobs">jobs</a> | ${submit}`;
}

function topBar(p: Page): string {
  const home = p.year === 2017 ? "http://www.ycombinator.com" : "https://news.ycombinator.com";
  const logo =
    p.year === 2025
      ? `<img src="y18.svg" width="18" height="18" style="border:1px white solid; display:block">`
      : `<img src="y18.gif" width="18" height="18" style="border:1px white solid;">`;
  const login = `<a href="login?goto=${encodeGoto(p.goto)}">login</a>`;
  const table = `<tr><td bgcolor="#ff6600"><table border="0" cellpadding="0" cellspacing="0" width="100%" style="padding:2px"><tr><td style="width:18px;padding-right:4px"><a href="${home}">${logo}</a></td>`;
  if (compact(p)) {
    return `${table}<td style="line-height:12pt; height:10px;"><span class="pagetop"><b class="hnname"><a href="news">Hacker News</a></b>${navLinks(p.year)}</span></td><td style="text-align:right;padding-right:4px;"><span class="pagetop">${login}</span></td></tr></table></td></tr>`;
  }
  const navIndent = p.year === 2025 ? " ".repeat(28) : " ".repeat(14);
  return (
    `        ${table}\n` +
    `                  <td style="line-height:12pt; height:10px;"><span class="pagetop"><b class="hnname"><a href="news">Hacker News</a></b>\n` +
    `${navIndent}${navLinks(p.year)}            </span></td><td style="text-align:right;padding-right:4px;"><span class="pagetop">\n` +
    `                              ${login}\n` +
    `                          </span></td>\n` +
    `              </tr></table></td></tr>\n`
  );
}

function contentStart(p: Page, title: string): string {
  const inner =
    p.kind === "item"
      ? `<table class="fatitem" border="0">`
      : p.year === 2025
        ? `<table border="0" cellpadding="0" cellspacing="0">`
        : `<table border="0" cellpadding="0" cellspacing="0" class="itemlist">`;
  if (compact(p)) return `<tr style='height:10px'/><tr id="bigbox"><td>${inner}`;
  const spacer =
    p.year === 2017
      ? `<tr style="height:10px"></tr>`
      : `<tr id="pagespace" title="${p.kind === "item" ? escapeTitle(title, p.year) : ""}" style="height:10px"></tr>`;
  return `${spacer}<tr><td>${inner}\n`;
}

// Logged out, HN never appends the `#ID` fragment to a comment's vote goto (it does logged in).
function voteCell(p: Page, id: number): string {
  return `<td valign="top" class="votelinks"><center><a id='up_${id}' href='vote?id=${id}&amp;how=up&amp;goto=${encodeGoto(p.goto)}'><div class='votearrow' title='upvote'></div></a></center></td>`;
}

function titleLink(p: Page, s: Story): string {
  const href = s.url ?? `item?id=${s.id}`;
  const rel = s.type === "job" ? ` rel="nofollow"` : "";
  const cls = p.year === 2025 ? "" : ` class="storylink"`;
  const site = s.site ? siteFor(s.site, p.year) : undefined;
  const sitebit = site
    ? `<span class="sitebit comhead"> (<a href="from?site=${site}"><span class="sitestr">${site}</span></a>)</span>`
    : "";
  const link = `<a href="${href}"${cls}${rel}>${escapeTitle(s.title, p.year)}</a>${sitebit}`;
  return p.year === 2025 ? `<span class="titleline">${link}</span>` : link;
}

function storyRow(p: Page, s: Story, rank: number | null): string {
  const rankCell = `<td align="right" valign="top" class="title"><span class="rank">${rank === null ? "" : `${rank}.`}</span></td>`;
  const title = `<td class="title">${titleLink(p, s)}</td>`;
  if (compact(p)) {
    return `<tr class="athing submission" id="${s.id}">${rankCell}${s.type === "job" ? `<td><img src="s.gif" height="1" width="14"></td>` : voteCell(p, s.id)}${title}</tr>`;
  }
  const row = p.year === 2025 ? `<tr class='athing submission' id='${s.id}'>` : `<tr class='athing' id='${s.id}'>`;
  let vote = voteCell(p, s.id);
  if (s.type === "job") {
    // Before 2025 a job row's arrow cell was simply empty; the s.gif spacer came later.
    vote = p.year === 2025 ? `<td><img src="s.gif" height="1" width="14"></td>       ` : `<td></td>`;
  }
  return `${row}\n      ${rankCell}      ${vote}${title}</tr>`;
}

function ageSpan(year: Year, id: number, age: string, time: number): string {
  const title = year === 2025 ? ` title="${isoUnix(time)}"` : "";
  return `<span class="age"${title}><a href="item?id=${id}">${age}</a></span>`;
}

function commentsLink(s: Story): string {
  const n = s.comments ?? 0;
  const label = n === 0 ? "discuss" : `${n}&nbsp;${n === 1 ? "comment" : "comments"}`;
  return `<a href="item?id=${s.id}">${label}</a>`;
}

// Real logged-out item pages do carry a fave token; the google "web" link was dropped around 2021.
function itemLinks(p: Page, s: Story): string {
  const q = encodeURIComponent(s.title);
  const past =
    p.year === 2025
      ? `https://hn.algolia.com/?query=${q}&type=story&dateRange=all&sort=byDate&storyText=false&prefix&page=0`
      : `https://hn.algolia.com/?query=${q}&sort=byDate&dateRange=all&type=story&storyText=false&prefix&page=0`;
  const web = p.year === 2025 ? "" : ` | <a href="https://www.google.com/search?q=${q}">web</a>`;
  return ` | <a href="${past}" class="hnpast">past</a>${web} | <a href="fave?id=${s.id}&amp;auth=${token("fave", s.id)}">favorite</a>`;
}

function subtextRow(p: Page, s: Story): string {
  const age = ageSpan(p.year, s.id, s.age, s.time);
  const hide = `<a href="hide?id=${s.id}&amp;goto=${encodeGoto(p.goto)}">hide</a>`;
  if (s.type === "job") {
    return `<tr><td colspan="2"></td><td class="subtext">\n        ${age} | ${hide}      </td></tr>`;
  }
  const points = `${s.points} point${s.points === 1 ? "" : "s"}`;
  const line =
    `<span class="score" id="score_${s.id}">${points}</span> by <a href="user?id=${s.user}" class="hnuser">${s.user}</a> ` +
    `${age} <span id="unv_${s.id}"></span> | ${hide}${p.kind === "item" ? itemLinks(p, s) : ""} | ${commentsLink(s)}`;
  if (compact(p)) return `<tr><td colspan="2"></td><td class="subtext"><span class="subline">${line}</span></td></tr>`;
  if (p.year === 2025) {
    return `<tr><td colspan="2"></td><td class="subtext"><span class="subline">\n          ${line}        </span>\n              </td></tr>`;
  }
  return `<tr><td colspan="2"></td><td class="subtext">\n        ${line}              </td></tr>`;
}

function moreLink(year: Year, nextPage: number): string {
  const start = `            <tr class="morespace" style="height:10px"></tr><tr><td colspan="2"></td>`;
  if (year === 2025) {
    return `${start}\n      <td class='title'><a href='?p=${nextPage}' class='morelink' rel='next'>More</a></td>    </tr>\n`;
  }
  const rel = year === 2017 ? "nofollow" : "next";
  return `${start}<td class="title"><a href="news?p=${nextPage}" class="morelink" rel="${rel}">More</a></td></tr>\n`;
}

function footer(p: Page): string {
  const rule = `<tr><td><img src="s.gif" height="10" width="0"><table width="100%" cellspacing="0" cellpadding="1"><tr><td bgcolor="#ff6600"></td></tr></table><br>`;
  if (p.year === 2025) {
    const links = `<center><span class="yclinks"><a href="newsguidelines.html">Guidelines</a> | <a href="newsfaq.html">FAQ</a> | <a href="lists">Lists</a> | <a href="https://github.com/HackerNews/API">API</a> | <a href="security.html">Security</a> | <a href="https://www.ycombinator.com/legal/">Legal</a> | <a href="https://www.ycombinator.com/apply/">Apply to YC</a> | <a href="mailto:hn@ycombinator.com">Contact</a></span><br><br>`;
    const search = `<form method="get" action="//hn.algolia.com/">Search: <input type="text" name="q" size="17" autocorrect="off" spellcheck="false" autocapitalize="off" autocomplete="off"></form></center></td></tr>`;
    if (compact(p)) {
      return `${rule}\n${links}\n${search}</table></center></body><script type="text/javascript" src="hn.js?v=1"></script></html>`;
    }
    return `${rule}\n${links}\n${search}      </table></center></body>\n      <script type='text/javascript' src='hn.js?v=1'></script>\n  </html>\n`;
  }
  const middle =
    p.year === 2017
      ? `        | <a href="bookmarklet.html">Bookmarklet</a>\n        | <a href="dmca.html">DMCA</a>\n`
      : `        | <a href="bookmarklet.html" rel="nofollow">Bookmarklet</a>\n        | <a href="http://www.ycombinator.com/legal/">Legal</a>\n`;
  return (
    `${rule}<center><span class="yclinks"><a href="newsguidelines.html">Guidelines</a>\n` +
    `        | <a href="newsfaq.html">FAQ</a>\n` +
    `        | <a href="mailto:hn@ycombinator.com">Support</a>\n` +
    `        | <a href="https://github.com/HackerNews/API">API</a>\n` +
    `        | <a href="security.html">Security</a>\n` +
    `        | <a href="lists">Lists</a>\n` +
    middle +
    `        | <a href="http://www.ycombinator.com/apply/">Apply to YC</a>\n` +
    `        | <a href="mailto:hn@ycombinator.com">Contact</a></span><br><br><form method="get" action="//hn.algolia.com/">Search:\n` +
    `          <input type="text" name="q" value="" size="17" autocorrect="off" spellcheck="false" autocapitalize="off" autocomplete="false"></form>\n` +
    `            </center></td></tr>${p.year === 2017 ? "      " : "\n      "}</table></center></body><script type='text/javascript' src='hn.js?v=1'></script></html>\n`
  );
}

function renderNews(year: Year, stories: Story[], page: number): string {
  const p: Page = { year, kind: "news", goto: page === 1 ? "news" : `news?p=${page}` };
  const first = year === 2025 ? " ".repeat(12) : " ".repeat(14);
  const rows = stories
    .map((s) => `${storyRow(p, s, s.rank)}${subtextRow(p, s)}\n      <tr class="spacer" style="height:5px"></tr>\n`)
    .join(" ".repeat(16));
  return (
    head(p, "") +
    topBar(p) +
    contentStart(p, "") +
    first +
    rows +
    moreLink(year, page + 1) +
    `  </table>\n</td></tr>\n` +
    footer(p)
  );
}

// HN's "next" skips the whole subtree, and "root" only appears from the second level down.
function commentNavs(comments: Comment[], i: number): { links: [string, number][]; size: number } {
  const c = comments[i]!;
  const ancestors: Comment[] = [];
  for (let j = i - 1, want = c.indent - 1; j >= 0 && want >= 0; j--) {
    if (comments[j]!.indent === want) {
      ancestors.unshift(comments[j]!);
      want--;
    }
  }
  let end = i + 1;
  while (end < comments.length && comments[end]!.indent > c.indent) end++;
  let prev: Comment | undefined;
  for (let j = i - 1; j >= 0 && comments[j]!.indent >= c.indent; j--) {
    if (comments[j]!.indent === c.indent) {
      prev = comments[j];
      break;
    }
  }
  const next = end < comments.length ? comments[end] : undefined;
  const links: [string, number][] = [];
  if (ancestors.length >= 2) links.push(["root", ancestors[0]!.id]);
  if (ancestors.length >= 1) links.push(["parent", ancestors[ancestors.length - 1]!.id]);
  if (prev) links.push(["prev", prev.id]);
  if (next) links.push(["next", next.id]);
  return { links, size: end - i };
}

function commentRow(p: Page, storyId: number, comments: Comment[], i: number): string {
  const c = comments[i]!;
  const { links, size } = commentNavs(comments, i);
  const indentImg = `<img src="s.gif" height="1" width="${c.indent * 40}">`;
  const age = ageSpan(p.year, c.id, c.age, c.time);
  const replyHref = `reply?id=${c.id}&amp;goto=${encodeGoto(`item?id=${storyId}`)}%23${c.id}`;
  const vote = c.dead ? `<td valign="top" class="votelinks"><center><img src="s.gif" height="1" width="14"></center></td>` : voteCell(p, c.id);
  const text = c.dead ? "[dead]" : commentHtml(c.text);
  if (compact(p)) {
    const navs = links.map(([label, id]) => ` | <a href="#${id}" class="clicky" aria-hidden="true">${label}</a>`).join("");
    return (
      `<tr class="athing comtr" id="${c.id}"><td><table border="0"><tr><td class="ind" indent="${c.indent}">${indentImg}</td>${vote}` +
      `<td class="default"><div style="margin-top:2px; margin-bottom:-10px;"><span class="comhead"><a href="user?id=${c.user}" class="hnuser">${c.user}</a> ${age} <span id="unv_${c.id}"></span>` +
      `<span class="navs">${navs} <a class="togg clicky" id="${c.id}" n="${size}" href="javascript:void(0)">[–]</a><span class="onstory"></span></span></span></div><br>\n` +
      `<div class="comment"><div class="commtext c00">${text}</div><div class="reply"><p><font size="1">${c.dead ? "" : `<u><a href="${replyHref}" rel="nofollow">reply</a></u>`}</font></div></div></td></tr></table></td></tr>`
    );
  }
  return (
    `<tr class='athing comtr ' id='${c.id}'><td>\n` +
    `            <table border='0'>  <tr>    <td class='ind'>${indentImg}</td>${vote}<td class="default"><div style="margin-top:2px; margin-bottom:-10px;"><span class="comhead">\n` +
    `          <a href="user?id=${c.user}" class="hnuser">${c.user}</a> ${age} <span id="unv_${c.id}"></span><span class="par"></span> <a class="togg" n="${size}" href="javascript:void(0)" onclick="return toggle(event, ${c.id})"></a>          <span class='storyon'></span>\n` +
    `                  </span></div><br><div class="comment">\n` +
    `                  <span class="commtext c00">${text}</span>\n` +
    `              <div class='reply'>        <p><font size="1">\n` +
    (c.dead ? "" : `                      <u><a href="${replyHref}">reply</a></u>\n`) +
    `                  </font>\n` +
    `      </div></div></td></tr>\n` +
    `      </table></td></tr>\n`
  );
}

function commentSection(p: Page, s: Story, comments: Comment[]): string {
  const hidden = `<input type="hidden" name="parent" value="${s.id}"><input type="hidden" name="goto" value="item?id=${s.id}"><input type="hidden" name="hmac" value="${token("hmac", s.id)}">`;
  const rows = comments.map((_, i) => commentRow(p, s.id, comments, i));
  if (compact(p)) {
    return (
      `<tr><td colspan="2"></td><td><div class="toptext"></div></td></tr><tr style='height:6px'/>` +
      `<tr><td colspan="2"></td><td><form action="comment" method="post">${hidden}<textarea name="text" rows="8" cols="80" wrap="virtual" style="vertical-align:bottom"></textarea>&nbsp;<a href="formatdoc" tabindex="-1"><font size="-2" color="#AFAFAF">help</font></a><br><br>\n` +
      `<input type="submit" value="add comment"></form></td></tr></table><br>\n` +
      `<table border="0" class="comment-tree">${rows.join("")}</table><br><br>\n</td></tr>`
    );
  }
  return (
    `\n        <tr style="height:10px"></tr><tr><td colspan="2"></td><td>\n` +
    `          <form method="post" action="comment">${hidden}<textarea name="text" rows="6" cols="60"></textarea>\n` +
    `                <br><br><input type="submit" value="add comment"></form>\n` +
    `      </td></tr>\n` +
    `  </table><br><br>\n` +
    `  <table border="0" class='comment-tree'>\n` +
    `            ${rows.join("        ")}` +
    `              </table>\n` +
    `      <br><br>\n` +
    `  </td></tr>\n`
  );
}

function renderItem(year: Year, s: Story, comments: Comment[]): string {
  const p: Page = { year, kind: "item", goto: `item?id=${s.id}` };
  const story = compact(p) ? storyRow(p, s, null) + subtextRow(p, s) : `        ${storyRow(p, s, null)}${subtextRow(p, s)}`;
  return head(p, s.title, s.id) + topBar(p) + contentStart(p, s.title) + story + commentSection(p, s, comments) + footer(p);
}

const data = JSON.parse(readFileSync(join(fixturesDir, "stories.json"), "utf8")) as Fixtures;
const stories = [...data.stories].sort((a, b) => a.rank - b.rank);
// Every story with comments in the data gets its item page; its listed count is its live comments (HN leaves dead ones out).
const discussed = stories.filter((s) => data.comments[String(s.id)]);
for (const s of discussed) {
  const live = data.comments[String(s.id)]!.filter((c) => !c.dead).length;
  if (s.comments !== live) throw new Error(`story ${s.id} lists ${s.comments} comments but has ${live} live ones in stories.json`);
}

for (const year of YEARS) {
  const dir = join(fixturesDir, String(year));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "news.html"), renderNews(year, stories.slice(0, PER_PAGE), 1));
  writeFileSync(join(dir, "news-p2.html"), renderNews(year, stories.slice(PER_PAGE, 2 * PER_PAGE), 2));
  for (const s of discussed) writeFileSync(join(dir, `item-${s.id}.html`), renderItem(year, s, data.comments[String(s.id)]!));
}
