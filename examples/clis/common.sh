# Sourced by each CLI's wrapper: the prompt it is given, and the claim tool's MCP server.
# HARNESS_TASK is the task; with `account: true`, the login the run made is told to the agent, as a
# user would tell it (a CLI has no notion of a site's login); the claim is the `finish` tool's.
here=$(cd "$(dirname "$0")" && pwd)
FINISH_MCP="$here/finish-mcp.mjs"
PROMPT="$HARNESS_TASK"
if [ -n "${HARNESS_SITE_USERNAME:-}" ] && [ -n "${HARNESS_SITE_PASSWORD:-}" ]; then
  PROMPT="$PROMPT

If the site asks you to log in, use the username $HARNESS_SITE_USERNAME and the password $HARNESS_SITE_PASSWORD."
fi
PROMPT="$PROMPT

Use the browser's tools (browser_snapshot reads the page; act on elements by their ref). Check the page after acting: claim success only if the page shows the task is done. When you are done, call the finish tool once, with success and summary."
