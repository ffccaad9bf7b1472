#!/usr/bin/env bash
# Proves a WACZ replays for real: crawls the bundled demo site into a WACZ, stops the site, serves
# replayweb.page (its ui.js and sw.js from npm) with the WACZ on 127.0.0.1 and checks in headless Chromium
# (Debian's) that the archived home page renders with its text and that a link in it opens another archived
# page inside the archive (test/replay/replay-check.mjs). Exit 0 when it does.
# Installs what is missing first: scripts/install-deps.sh, scripts/install-test-tools.sh --replay.
# Usage: scripts/replay-wacz.sh [--keep DIR]     (--keep: leave the WACZ and the served directory in DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
keep=""
if [ "${1:-}" = "--keep" ]; then keep="${2:?--keep needs a directory}"; fi
scripts/install-deps.sh
scripts/install-test-tools.sh --replay
scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server >&2

work=$(mktemp -d)
server_pid=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

build/demo/asiocrawl-demo-server --port 0 --pages 50 >"$work/server.out" &
server_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/server.out" ] && break
  sleep 0.1
done
root=$(head -n 1 "$work/server.out")
if [ -z "$root" ]; then
  echo "replay-wacz: the demo server did not start" >&2
  exit 1
fi
mkdir -p "$work/web/replay"
# Exit status 1 only says some URLs of the demo site failed (it has broken links on purpose).
status=0
build/asiocrawl --no-report -q --warc "$work/crawl.warc.gz" --wacz "$work/web/site.wacz" "$root" || status=$?
if [ "$status" -gt 1 ] || [ ! -s "$work/web/site.wacz" ]; then
  echo "replay-wacz: the crawl did not write the WACZ (exit status $status)" >&2
  exit 1
fi
# The live site goes away: whatever renders now comes from the archive.
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""

rwp=test/replay/node_modules/replaywebpage
cp "$rwp/ui.js" "$work/web/"
cp "$rwp/ui.js" "$rwp/sw.js" "$work/web/replay/"
cat >"$work/web/index.html" <<HTML
<!doctype html>
<html><head><meta charset="utf-8"><title>asiocrawl WACZ replay</title><script src="ui.js"></script></head>
<body><replay-web-page style="display:block;height:700px" source="site.wacz" url="$root" embed="replayonly"></replay-web-page></body></html>
HTML
echo "replay-wacz: $(unzip -l "$work/web/site.wacz" | tail -n 1 | awk '{print $2}') files in the WACZ, $(stat -c %s "$work/web/site.wacz") bytes" >&2
check=0
node test/replay/replay-check.mjs --dir "$work/web" --url "$root" --text "A generated site for crawler tests." \
  --link "First page" --link-text "Page 0" --chromium "$(command -v chromium)" || check=$?
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp -r "$work/web/." "$keep/"
  echo "replay-wacz: kept in $keep" >&2
fi
exit "$check"
