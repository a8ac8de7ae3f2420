#!/bin/sh
# Claude Code (@anthropic-ai/claude-code), unmodified, headless as a command agent:
#   claude.sh <claude's link>
# Its settings go in $HOME (the run's own work folder, sandboxed): ~/.claude.json with onboarding
# done and this folder trusted, and an MCP config with the run's browser (HARNESS_MCP_URL) and the
# claim tool. It reads ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY (the run's gateway and token) itself.
set -eu
. "$(dirname "$0")/common.sh"
cat > "$HOME/.claude.json" <<JSON
{"hasCompletedOnboarding": true, "projects": {"$PWD": {"hasTrustDialogAccepted": true}}}
JSON
cat > "$HOME/mcp.json" <<JSON
{"mcpServers": {
  "browser": {"type": "http", "url": "$HARNESS_MCP_URL"},
  "claim": {"type": "stdio", "command": "node", "args": ["$FINISH_MCP", "$HARNESS_CLAIM_FILE"]}
}}
JSON
# No update checks, telemetry or other traffic: the run has no network but its own.
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
# MCP tools offered as they are, not deferred behind its ToolSearch tool (its first calls would offer no browser).
export ENABLE_TOOL_SEARCH=false
exec "$1" -p "$PROMPT" --mcp-config "$HOME/mcp.json" --strict-mcp-config --permission-mode bypassPermissions --output-format json
