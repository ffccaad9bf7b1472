#!/usr/bin/env bash
# N asiocrawl processes sharing one crawl through a redis-server of their own, on this machine
# (docs/DEPLOY.md). Every instance runs the same command; each writes OUT/records-<i>.jsonl.
# Usage: scripts/shared-crawl.sh N OUT [asiocrawl options...] URL...
#   ASIOCRAWL=path/to/asiocrawl (default build/asiocrawl); REDIS_URL=redis://host:port/db uses that Redis
#   instead of starting one.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 N OUT [asiocrawl options...] URL..." >&2
  exit 2
fi
n=$1
out=$2
shift 2
asiocrawl=${ASIOCRAWL:-$(dirname "$0")/../build/asiocrawl}
mkdir -p "$out"

redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

if [ -z "${REDIS_URL:-}" ]; then
  # A free port: the kernel's pick for 127.0.0.1:0 (redis-server has no --port 0).
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$out/redis"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$out/redis" --save '' --appendonly yes \
    --logfile "$out/redis/redis.log" &
  redis_pid=$!
  for _ in $(seq 100); do
    if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then break; fi
    sleep 0.1
  done
  REDIS_URL="redis://127.0.0.1:$port/0"
fi

pids=()
for i in $(seq 0 $((n - 1))); do
  "$asiocrawl" --redis "$REDIS_URL" --instance "$i" -o "$out/records-{instance}.jsonl" \
    --report-json "$out/report-{instance}.json" --no-report "$@" 2>"$out/log-$i.txt" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=$?
done
echo "shared-crawl: $n instances done (exit $status); $(cat "$out"/records-*.jsonl | wc -l) records in $out" >&2
exit "$status"
