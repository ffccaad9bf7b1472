#!/usr/bin/env bash
# Installs what is missing, builds, serves the bundled demo site on 127.0.0.1 and crawls it.
# Usage: scripts/demo.sh [asiocrawl options]      e.g. scripts/demo.sh --max-tasks 10 -v -o records.jsonl
#   (records.jsonl in the current directory; --config x.yaml replaces config/demo.yaml)
set -euo pipefail
# Relative paths among the arguments (-o records.jsonl, --config my.yaml) are the caller's: the crawler runs
# in the caller's directory; only the build runs in the repository.
caller=$PWD
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
crawler=$repo/build/asiocrawl
demo_server=$repo/build/demo/asiocrawl-demo-server
if [ -n "${ASIOCRAWL_DEMO_CLI:-}" ] && [ -n "${ASIOCRAWL_DEMO_SERVER:-}" ]; then
  # Binaries built already (test/cli/cli_test.cpp runs the script with its own): nothing installed or built.
  crawler=$ASIOCRAWL_DEMO_CLI
  demo_server=$ASIOCRAWL_DEMO_SERVER
else
  scripts/install-deps.sh
  # Only what the demo runs: the CLI and the demo server (the tests are scripts/test.sh's business).
  scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server >&2
fi

server_out=$(mktemp)
server_pid=""
trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -f "$server_out"' EXIT
source scripts/demo-server.sh
start_demo_server "$demo_server" 200 "$server_out"
echo "demo: crawling the demo site at $root" >&2
cd "$caller"
# The script's --config first: a --config among the arguments replaces it (the last one wins).
"$crawler" --config "$repo/config/demo.yaml" "$@" "$root"
