/**
 * The replica's own stand-ins for HN's static files. Captures link `news.css?…`, `hn.js?…`,
 * `y18.svg` and `s.gif`; these are written for the replica, small and readable.
 */

/** Votes and hides in the background the way HN's script does, for `class='clicky'` links (2025)
 * and the older `onclick='return vote(event, this, "up")'` and `onclick="return hidestory(event, this, ID)"`
 * links: the arrow (or the story's rows) goes at once, whatever the server answers, and the page
 * stays where it is. A hide is sent as HN's script sends it: `snip-story`, its `goto` renamed `onop`. */
const script = `
function vote(ev, link, how) {
  ev.preventDefault();
  var id = link.id.split('_')[1];
  var up = document.getElementById('up_' + id);
  var unv = document.getElementById('unv_' + id);
  var background = new URL(link.href);
  background.hash = '';
  background.searchParams.set('js', 't');
  fetch(background, { credentials: 'same-origin' }).then(function (response) { return response.text(); });
  if (how === 'up') {
    if (up) up.classList.add('nosee');
    if (unv) {
      var un = link.getAttribute('href').replace('how=up', 'how=un');
      var attr = link.classList.contains('clicky') ? "class='clicky'" : "onclick='return vote(event, this, \\"un\\")'";
      unv.innerHTML = " | <a id='un_" + id + "' " + attr + " href='" + un.replace(/&/g, '&amp;') + "'>unvote</a>";
    }
  } else {
    if (up) up.classList.remove('nosee');
    if (unv) unv.innerHTML = '';
  }
  return false;
}
function hidestory(ev, link, id) {
  ev.preventDefault();
  var row = document.getElementById(id);
  if (row) {
    var subtext = row.nextElementSibling;
    var spacer = subtext && subtext.nextElementSibling;
    if (spacer && spacer.classList.contains('spacer')) spacer.remove();
    if (subtext) subtext.remove();
    row.remove();
  }
  var snip = new URL(link.href);
  snip.pathname = '/snip-story';
  var goto = snip.searchParams.get('goto');
  snip.searchParams.delete('goto');
  if (goto !== null) snip.searchParams.set('onop', goto);
  fetch(snip, { credentials: 'same-origin' }).then(function (response) { return response.text(); });
  return false;
}
document.addEventListener('click', function (ev) {
  var link = ev.target instanceof Element ? ev.target.closest('a.clicky') : null;
  if (!link) return;
  if (link.classList.contains('hider')) {
    var hid = /[?&]id=([^&]+)/.exec(link.getAttribute('href') || '');
    if (hid) hidestory(ev, link, hid[1]);
    return;
  }
  var how = /[?&]how=(up|un)/.exec(link.getAttribute('href') || '');
  if (how) vote(ev, link, how[1]);
});
`;

const css = `
body { font-family: Verdana, Geneva, sans-serif; font-size: 10pt; color: #828282; }
td { font-family: Verdana, Geneva, sans-serif; font-size: 10pt; color: #828282; }
a:link, a:visited { color: #000000; text-decoration: none; }
.pagetop, .pagetop a:link, .pagetop a:visited { color: #222222; }
.hnname a:link { font-weight: bold; }
.title, .titleline { font-size: 10pt; color: #828282; }
.titleline > a, a.storylink { color: #000000; }
.subtext, .subline, .subtext a:link, .subline a:link, .comhead a:link { font-size: 7pt; color: #828282; }
.votearrow { width: 10px; height: 10px; border: 0; margin: 3px 2px 6px; cursor: pointer;
  background: linear-gradient(to top right, transparent 50%, #9a9a9a 50%) left / 50% 100% no-repeat,
              linear-gradient(to top left, transparent 50%, #9a9a9a 50%) right / 50% 100% no-repeat; }
.nosee { visibility: hidden; pointer-events: none; cursor: default; }
.commtext { color: #000000; }
`;

const logo = `<svg xmlns="http://www.w3.org/2000/svg" width="18" height="18" viewBox="0 0 18 18">
<rect width="18" height="18" fill="#ff6600"/><path d="M5 4l4 6 4-6M9 10v4" stroke="#fff" stroke-width="2" fill="none"/></svg>`;

/** Before 2014 the up arrow was an image (`grayarrow.gif`, 10×10): a gray triangle. */
const arrow = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10"><path d="M5 0L10 10H0z" fill="#9a9a9a"/></svg>`;

/** A 1×1 transparent GIF: HN spaces its tables with it. */
const spacer = Uint8Array.from(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));

export const assets: ReadonlyMap<string, { type: string; body: string | Uint8Array<ArrayBuffer> }> = new Map([
  ['/hn.js', { type: 'text/javascript; charset=utf-8', body: script }],
  ['/news.css', { type: 'text/css; charset=utf-8', body: css }],
  ['/y18.svg', { type: 'image/svg+xml', body: logo }],
  ['/s.gif', { type: 'image/gif', body: spacer }],
  ['/favicon.ico', { type: 'image/svg+xml', body: logo }],
  // Pre-2014 pages' images (legacy.ts points their `ycombinator.com/images/` at the site).
  ['/y18.gif', { type: 'image/svg+xml', body: logo }],
  ['/grayarrow.gif', { type: 'image/svg+xml', body: arrow }],
]);
