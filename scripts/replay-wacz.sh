#!/usr/bin/env bash
# Proves a WACZ replays for real: crawls the bundled demo site into a WACZ, stops the site, serves
# replayweb.page (its ui.js and sw.js from npm) with the WACZ on 127.0.0.1 and checks in headless Chromium
# (Debian's) that the archived home page renders with its text and that a link in it opens another archived
# page inside the archive (test/browser/replay-check.mjs). Exit 0 when it does.
# Usage: scripts/replay-wacz.sh [--keep DIR]
#          installs what is missing first (scripts/install-deps.sh, scripts/install-test-tools.sh --browser)
#          and builds build/'s CLI and demo server; --keep leaves the WACZ and the served directory in DIR.
#        scripts/replay-wacz.sh --build-dir DIR
#          the ctest form (label browser): installs and builds nothing, uses DIR's asiocrawl and demo server;
#          exit 77 (skipped) when chromium, node or test/browser/node_modules is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=""
build=""
case "${1:-}" in
  --keep) keep="${2:?--keep needs a directory}" ;;
  --build-dir) build="${2:?--build-dir needs a directory}" ;;
  "") ;;
  *)
    echo "replay-wacz: unknown argument '$1' (--keep DIR, --build-dir DIR)" >&2
    exit 2
    ;;
esac
if [ -z "$build" ]; then
  scripts/install-deps.sh
  scripts/install-test-tools.sh --browser
  scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server >&2
  build=build
elif ! command -v node >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1 ||
  [ ! -f test/browser/node_modules/replaywebpage/sw.js ]; then
  echo "replay-wacz: skipped: needs node, chromium and test/browser/node_modules" \
    "(scripts/install-test-tools.sh --browser)" >&2
  exit 77
fi

work=$(mktemp -d)
server_pid=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

source scripts/demo-server.sh
start_demo_server "$build/demo/asiocrawl-demo-server" 50 "$work/server.out"
mkdir -p "$work/web/replay"
# Exit status 1 only says some URLs of the demo site failed (it has broken links on purpose).
status=0
"$build/asiocrawl" --no-report -q --warc "$work/crawl.warc.gz" --wacz "$work/web/site.wacz" "$root" || status=$?
if [ "$status" -gt 1 ] || [ ! -s "$work/web/site.wacz" ]; then
  echo "replay-wacz: the crawl did not write the WACZ (exit status $status)" >&2
  exit 1
fi
# The live site goes away: whatever renders now comes from the archive.
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""

rwp=test/browser/node_modules/replaywebpage
cp "$rwp/ui.js" "$work/web/"
cp "$rwp/ui.js" "$rwp/sw.js" "$work/web/replay/"
cat >"$work/web/index.html" <<HTML
<!doctype html>
<html><head><meta charset="utf-8"><title>asiocrawl WACZ replay</title><script src="ui.js"></script></head>
<body><replay-web-page style="display:block;height:700px" source="site.wacz" url="$root" embed="replayonly"></replay-web-page></body></html>
HTML
echo "replay-wacz: $(unzip -l "$work/web/site.wacz" | tail -n 1 | awk '{print $2}') files in the WACZ, $(stat -c %s "$work/web/site.wacz") bytes" >&2
check=0
node test/browser/replay-check.mjs --dir "$work/web" --url "$root" --text "A generated site for crawler tests." \
  --link "First page" --link-text "Page 0" --chromium "$(command -v chromium)" || check=$?
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp -r "$work/web/." "$keep/"
  echo "replay-wacz: kept in $keep" >&2
fi
exit "$check"
