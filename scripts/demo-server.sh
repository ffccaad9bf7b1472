# Sourced by the scripts that crawl the bundled demo site (scripts/demo.sh, scripts/dashboard-check.sh,
# scripts/replay-wacz.sh): start_demo_server PROGRAM PAGES OUT_FILE starts the demo server PROGRAM
# (asiocrawl-demo-server) with PAGES pages on a free loopback port, its output in OUT_FILE, and sets server_pid
# (for the caller's cleanup) and root (the site's root URL, which the server prints once it listens); it fails
# when the server has not printed it within ten seconds.
# shellcheck shell=bash disable=SC2034 # server_pid and root are the caller's
start_demo_server() {
  local program="$1" pages="$2" out="$3"
  "$program" --port 0 --pages "$pages" >"$out" &
  server_pid=$!
  for _ in $(seq 1 100); do
    [ -s "$out" ] && break
    sleep 0.1
  done
  root=$(head -n 1 "$out")
  if [ -z "$root" ]; then
    echo "$(basename "$0"): the demo server did not start" >&2
    return 1
  fi
}
