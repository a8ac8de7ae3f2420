#!/bin/sh
# Codex CLI (@openai/codex), unmodified, headless as a command agent:
#   codex.sh <codex's link>
# Its config goes in $CODEX_HOME, $HOME/.codex (the run's own work folder, sandboxed): the run's
# gateway as its model provider (Responses API, the key from OPENAI_API_KEY), no approvals, no
# sandbox of its own (bubblewrap holds it already), this folder trusted, and the run's browser
# (HARNESS_MCP_URL) and the claim tool as MCP servers. The model is named as the provider's own
# (the gateway answers with the run's model whatever the name): under one of OpenAI's names Codex
# hides MCP tools behind its code mode's `exec` or its `tool_search`; under another it offers them
# as they are, a namespace per server. Its first call waits for both servers (`required`, no
# incremental tools), so it already offers the browser.
set -eu
. "$(dirname "$0")/common.sh"
mkdir -p "$HOME/.codex"
cat > "$HOME/.codex/config.toml" <<TOML
model = "harness-eval"
model_provider = "harness"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[features]
incremental_tools = false

[model_providers.harness]
name = "harness-eval gateway"
base_url = "$OPENAI_BASE_URL"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[projects."$PWD"]
trust_level = "trusted"

[mcp_servers.browser]
url = "$HARNESS_MCP_URL"
required = true
startup_timeout_sec = 60

[mcp_servers.claim]
command = "node"
args = ["$FINISH_MCP", "$HARNESS_CLAIM_FILE"]
required = true
TOML
exec "$1" exec --skip-git-repo-check "$PROMPT"
