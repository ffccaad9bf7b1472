# Sourced by the scripts that crawl the bundled demo site (scripts/dashboard-check.sh, scripts/replay-wacz.sh):
# start_demo_server BUILD_DIR PAGES WORK_DIR starts BUILD_DIR's asiocrawl-demo-server on a free loopback port,
# sets demo_server_pid (for the caller's cleanup) and demo_root (the site's root URL), and fails when the server
# does not say where it listens within ten seconds.
# shellcheck shell=bash disable=SC2034 # demo_server_pid and demo_root are the caller's
start_demo_server() {
  local build="$1" pages="$2" work="$3"
  "$build/demo/asiocrawl-demo-server" --port 0 --pages "$pages" >"$work/server.out" &
  demo_server_pid=$!
  for _ in $(seq 1 100); do
    [ -s "$work/server.out" ] && break
    sleep 0.1
  done
  demo_root=$(head -n 1 "$work/server.out")
  if [ -z "$demo_root" ]; then
    echo "$(basename "$0"): the demo server did not start" >&2
    return 1
  fi
}
