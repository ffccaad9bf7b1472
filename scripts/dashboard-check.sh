#!/usr/bin/env bash
# The live dashboard in a real browser: starts the bundled demo site and a crawl of it with the control API
# (--listen, a token, a delay so that it is still running while the test acts), then drives the page in
# headless Chromium (Debian's) with test/browser/dashboard-check.mjs: the token form, the numbers against
# /api/status, pause and resume of the host through its buttons (checked through the API), Stop, and no
# console error. Screenshots go to BUILD_DIR/dashboard-shots (kept on failure).
# Builds nothing: scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server first. Needs chromium, node and
# test/browser/node_modules (scripts/install-test-tools.sh --browser installs them).
# Usage: scripts/dashboard-check.sh [BUILD_DIR]      (default build)
# Exit 0 when it passes, 1 when it fails, 77 when chromium, node or puppeteer-core is missing (ctest: skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if ! command -v node >/dev/null 2>&1 || [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ] ||
  [ ! -f test/browser/node_modules/puppeteer-core/package.json ]; then
  echo "dashboard-check: skipped: needs node, chromium and test/browser/node_modules" \
    "(scripts/install-test-tools.sh --browser)" >&2
  exit 77
fi
for program in "$build/asiocrawl" "$build/demo/asiocrawl-demo-server"; do
  if [ ! -x "$program" ]; then
    echo "dashboard-check: $program is not built (scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server)" >&2
    exit 1
  fi
done

work=$(mktemp -d)
server_pid=""
crawl_pid=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  for pid in $crawl_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

source scripts/demo-server.sh
start_demo_server "$build/demo/asiocrawl-demo-server" 300 "$work/server.out"
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port); s.close(); })')
token="check-$RANDOM$RANDOM"
# A quarter second between requests: 300 pages take over a minute, longer than the test needs. The second root
# is on a port nothing listens on (9, discard): a failure for the error panels.
failing="http://127.0.0.1:9/unreachable"
"$build/asiocrawl" --listen "127.0.0.1:$port" --listen-token "$token" --delay 250ms --no-report -q "$root" \
  "$failing" >"$work/crawl.out" 2>&1 &
crawl_pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
status=0
node test/browser/dashboard-check.mjs --url "http://127.0.0.1:$port/" --token "$token" --host 127.0.0.1 \
  --site "$root" --failing "$failing" --shots "$build/dashboard-shots" || status=$?
if [ "$status" -ne 0 ]; then
  exit "$status" # the EXIT trap ends the crawl and the site
fi
# The page pressed Stop: the crawl ends by itself (exit 0, or 1 for the failed URLs).
for _ in $(seq 1 100); do
  kill -0 "$crawl_pid" 2>/dev/null || break
  sleep 0.1
done
crawl_status=0
if kill -0 "$crawl_pid" 2>/dev/null; then
  echo "dashboard-check: the crawl did not end after Stop" >&2
  status=1
else
  wait "$crawl_pid" || crawl_status=$?
  crawl_pid=""
  if [ "$crawl_status" -gt 1 ]; then
    echo "dashboard-check: the crawl exited with $crawl_status:" >&2
    cat "$work/crawl.out" >&2
    status=1
  fi
fi
exit "$status"
