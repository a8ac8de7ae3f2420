/**
 * Turns a captured page back into the logged-out page it was derived from: no auth tokens, no user
 * name in the top bar, no vote state. The replica derives every logged-in view from logged-out
 * markup, and `record hn` runs this so that no secret of the recording account is ever saved.
 * Regular expressions suffice here: these are HN's own stereotyped constructs (see MARKUP.md).
 */
const rules: ReadonlyArray<readonly [RegExp, string]> = [
  // Top bar: `<a id='me' …>NAME</a> (KARMA) | <a id='logout' …>logout</a>` becomes the login link.
  [/<a id=['"]me['"][^]*?href="logout\?[^"]*?goto=([^"]*)"[^>]*>logout<\/a>/g, '<a href="login?goto=$1">login</a>'],
  [/ \| <a href="threads\?id=[^"]*">threads<\/a>/g, ''],
  // Before 2014: `<a href="user?id=NAME">NAME</a>&nbsp;(KARMA)&nbsp;|&nbsp;<a href="/x?fnid=…">logout</a>`, the vote links' `by=NAME`, and flag links to an `fnid`.
  [/<a href="user\?id=[^"]*">[^<]*<\/a>(?:&nbsp;|\s)*\(\d+\)(?:&nbsp;|\s)*\|(?:&nbsp;|\s)*<a href="[^"]*"[^>]*>logout<\/a>/g, '<a href="login?goto=news">login</a>'],
  [/(vote\?[^"'\s>]*?)&(?:amp;)?by=[^&"'\s>]*/g, '$1'],
  [/ \| <a href="\/r\?fnid=[^"]*"[^>]*>flag<\/a>/g, ''],
  // Unvote links and the vote state of arrows.
  [/(<span id="unv_\d+">) \| <a id='un_\d+'[^>]*>unvote<\/a>(<\/span>)/g, '$1$2'],
  [/ onclick='return vote\(event, this, "(?:up|un|down)"\)'/g, ''],
  [/ class='(?:clicky ?)?(?:nosee)?'/g, ''],
  // Flag links exist only logged in; hide links lose their script class with their token.
  [/ \| <a href="flag\?[^"]*"[^>]*>flag<\/a>/g, ''],
  [/ class="clicky hider"/g, ''],
  [/ onclick=["']return hidestory\(event, this, \d+\)["']/g, ''],
  [/(?:&amp;|&|\?)auth=[0-9a-f]+/g, ''],
  // The comment form's per-user hmac.
  [/(name="hmac" value=")[0-9a-f]+"/g, '$1"'],
];

export function sanitizeCapture(html: string): string {
  return rules.reduce((page, [pattern, replacement]) => page.replace(pattern, replacement), html);
}
