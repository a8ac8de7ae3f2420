#!/bin/sh
# Gemini CLI (@google/gemini-cli), unmodified, headless as a command agent:
#   gemini.sh <gemini's link>
# Its settings go in $HOME/.gemini (the run's own work folder, sandboxed): API-key auth, folder
# trust off, no telemetry or updates, and the run's browser (HARNESS_MCP_URL) and the claim tool as
# trusted MCP servers. It reads GOOGLE_GEMINI_BASE_URL / GEMINI_API_KEY (the run's gateway and token) itself.
# A model is named (the gateway answers with the run's model whatever the name): without one, each
# turn begins with a routing call, a JSON-mode classifier choosing between Google's models.
set -eu
. "$(dirname "$0")/common.sh"
mkdir -p "$HOME/.gemini"
cat > "$HOME/.gemini/settings.json" <<JSON
{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "mcpServers": {
    "browser": {"httpUrl": "$HARNESS_MCP_URL", "trust": true},
    "claim": {"command": "node", "args": ["$FINISH_MCP", "$HARNESS_CLAIM_FILE"], "trust": true}
  }
}
JSON
exec "$1" -p "$PROMPT" -m gemini-2.5-flash --yolo --output-format json
