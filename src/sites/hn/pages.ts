import { escapeHtml } from '../../text.ts';

/** HN's login page: a bare page, not the news frame, with the notice above the form. */
export function loginPage(goto: string, notice?: string): string {
  const hiddenGoto = `<input type="hidden" name="goto" value="${escapeHtml(goto)}">`;
  const fields = (autofocus: boolean) =>
    `<table border="0"><tr><td>username:</td><td><input type="text" name="acct" size="20" autocorrect="off" spellcheck="false" autocapitalize="off"${autofocus ? ' autofocus="true"' : ''}></td></tr>` +
    `<tr><td>password:</td><td><input type="password" name="pw" size="20"></td></tr></table><br>`;
  return (
    `<html lang="en" op="login"><head><meta name="viewport" content="width=device-width, initial-scale=1.0">` +
    `<link rel="stylesheet" type="text/css" href="news.css"><title>Login | Hacker News</title></head><body>` +
    (notice ? `${notice}\n<br><br>\n` : '') +
    `<b>Login</b><br><br>\n<form action="login" method="post">${hiddenGoto}${fields(true)}\n<input type="submit" value="login"></form>` +
    `<a href="forgot">Forgot your password?</a><br><br>\n` +
    `<b>Create Account</b><br><br>\n<form action="login" method="post">${hiddenGoto}<input type="hidden" name="creating" value="t">${fields(false)}\n` +
    `<input type="submit" value="create account"></form></body></html>`
  );
}

/** HN answers many things with one line of plain text on an otherwise empty page. */
export const notices = {
  unknown: 'Unknown.',
  noSuchItem: 'No such item.',
  noSuchUser: 'No such user.',
  cantVote: "Can't make that vote.",
  badLogin: 'Bad login.',
  mustLogin: 'You have to be logged in to vote.',
  rateLimited: "Sorry, we're not able to serve your requests this quickly.",
  noAccounts: 'Creating accounts is not possible on the replica.',
} as const;
