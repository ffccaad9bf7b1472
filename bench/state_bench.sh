#!/usr/bin/env bash
# Durable state at scale (issue 12): a crawl with a state directory discovers N URLs of the latency server's
# link space (every page links to 50 new ones, answers at once), then stops (SIGTERM); printed: pages/s, peak
# RSS, RSS per discovered URL, disk bytes per URL after the stop, and the resume time (the same command again:
# from its start to its first request). The same crawl without a state dir is run to the same point for
# comparison (its waiting URLs live in memory).
# Usage: bench/state_bench.sh CRAWLER LATENCY_SERVER [URLS...]      (default URLS: 1000000 10000000)
# Environment: BENCH_DIR (work directory), TASKS (default 100).
set -euo pipefail
CRAWLER=$1
SERVER=$2
shift 2
SIZES=("$@")
((${#SIZES[@]})) || SIZES=(1000000 10000000)
WORK=${BENCH_DIR:-$(mktemp -d /tmp/asiocrawl-state-bench.XXXXXX)}
TASKS=${TASKS:-100}
FANOUT=50
mkdir -p "$WORK"

server_pid=
cleanup() { [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

"$SERVER" --delay-ms 0 --fanout $FANOUT --pages 100000000 >"$WORK/server.out" 2>"$WORK/server.err" &
server_pid=$!
for _ in $(seq 100); do [[ -s $WORK/server.out ]] && break; sleep 0.05; done
URL=$(head -n1 "$WORK/server.out")
requests() { curl -s "${URL}__stats" | sed -E 's/.*"requests":([0-9]+).*/\1/'; }
hwm_kb() { awk '/VmHWM/ { print $2 }' "/proc/$1/status"; }
# CPU seconds (user + system, all threads) a process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

# One crawl until it has discovered $1 URLs (pages fetched x fanout), then SIGTERM. Prints
# "pages seconds hwm_kb cpu_seconds". Extra arguments go to the crawler.
crawl_until() {
    local urls=$1
    shift
    local pages=$((urls / FANOUT)) first
    first=$(requests)
    "$CRAWLER" -qq --ignore-robots --max-tasks "$TASKS" --max-per-host "$TASKS" "$@" "$URL" \
        >/dev/null 2>"$WORK/crawl.err" &
    local pid=$! start end hwm=0 now cpu=0
    start=$(date +%s.%N)
    while :; do
        now=$(requests)
        hwm=$(hwm_kb "$pid" 2>/dev/null || echo "$hwm")
        cpu=$(cpu_s "$pid" 2>/dev/null || echo "$cpu")
        ((now - first >= pages)) && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    end=$(date +%s.%N)
    hwm=$(hwm_kb "$pid" 2>/dev/null || echo "$hwm")
    cpu=$(cpu_s "$pid" 2>/dev/null || echo "$cpu")
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    echo "$((now - first)) $(echo "$end - $start" | bc) $hwm $cpu"
}

echo "| discovered URLs | run | pages | pages/s | CPU per page | peak RSS | RSS per URL | disk per URL | resume |"
echo "|---|---|---|---|---|---|---|---|---|"
for urls in "${SIZES[@]}"; do
    state=$WORK/state-$urls
    rm -rf "$state"
    read -r pages seconds hwm cpu < <(crawl_until "$urls" --state-dir "$state")
    disk=$(du -sb "$state" | cut -f1)
    # Resume: the same command, timed from its start to its first request at the server.
    before=$(requests)
    "$CRAWLER" -qq --ignore-robots --max-tasks "$TASKS" --max-per-host "$TASKS" --state-dir "$state" "$URL" \
        >/dev/null 2>&1 &
    pid=$!
    start=$(date +%s.%N)
    while (($(requests) == before)) && kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
    resume=$(echo "$(date +%s.%N) - $start" | bc)
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    discovered=$((pages * FANOUT))
    printf '| %s | state dir | %s | %.0f | %.0f us | %d MB | %.1f B | %.1f B | %.1f s |\n' "$discovered" "$pages" \
        "$(echo "$pages / $seconds" | bc -l)" "$(echo "$cpu * 1000000 / $pages" | bc -l)" $((hwm / 1024)) \
        "$(echo "$hwm * 1024 / $discovered" | bc -l)" "$(echo "$disk / $discovered" | bc -l)" "$resume"
    rm -rf "$state"
    read -r pages seconds hwm cpu < <(crawl_until "$urls")
    discovered=$((pages * FANOUT))
    printf '| %s | memory only | %s | %.0f | %.0f us | %d MB | %.1f B | - | - |\n' "$discovered" "$pages" \
        "$(echo "$pages / $seconds" | bc -l)" "$(echo "$cpu * 1000000 / $pages" | bc -l)" $((hwm / 1024)) \
        "$(echo "$hwm * 1024 / $discovered" | bc -l)"
done
