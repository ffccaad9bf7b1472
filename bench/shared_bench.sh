#!/usr/bin/env bash
# A crawl shared through Redis (docs/DEPLOY.md): pages/s with 1, 2 and 4 instances on the latency site (every
# answer delayed) and on the 20,000-page generated site, Redis memory per URL, and the shared frontier against
# the embedded ones (memory only, --state-dir). Prints Markdown tables.
#   bench/shared_bench.sh            (builds Release tools in build-bench/, the demo server in build/)
# Env: TASKS (max_tasks per instance, 32), DELAY_MS (50), LATENCY_PAGES (4000), SITE_PAGES (20000),
# ROUNDS (1: how many times each latency row runs; the speed-up is of the medians), SECTIONS ("latency site").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-bench}
TASKS=${TASKS:-32}
DELAY_MS=${DELAY_MS:-50}
LATENCY_PAGES=${LATENCY_PAGES:-4000}
SITE_PAGES=${SITE_PAGES:-20000}
ROUNDS=${ROUNDS:-1}
SECTIONS=${SECTIONS:-latency site}
WORK=$(mktemp -d /tmp/asiocrawl-shared-bench.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DASIOCRAWL_BUILD_BENCH=ON \
    -DASIOCRAWL_BUILD_TESTS=OFF -DASIOCRAWL_BUILD_DEMO=OFF >/dev/null
cmake --build "$BUILD" -j"${ASIOCRAWL_JOBS:-2}" --target asiocrawl_cli asiocrawl-bench-latency-server >/dev/null
DEMO=${DEMO:-$ROOT/build/demo/asiocrawl-demo-server}
[[ -x $DEMO ]] || cmake --build "$ROOT/build" --target asiocrawl-demo-server >/dev/null
CRAWLER=$BUILD/asiocrawl

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
REDIS_PORT=$(free_port)
mkdir -p "$WORK/redis"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK/redis" --save '' --appendonly yes \
    --appendfsync everysec --logfile "$WORK/redis/log" &
PIDS+=($!)
for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }
used_memory() { rcli INFO memory | tr -d '\r' | grep '^used_memory:' | cut -d: -f2; }

start_server() { # OUT COMMAND...: sets URL
        local out=$1
    shift
    rm -f "$out.url"
    "$@" >"$out.url" 2>"$out.log" &
    PIDS+=($!)
    SERVER_PID=$!
    for _ in $(seq 200); do [[ -s $out.url ]] && break; sleep 0.05; done
    URL=$(head -1 "$out.url")
}

# run_instances NAME N ARGS...: N instances of one shared crawl; sets WALL (s), CPU (user+sys s of all).
run_instances() {
    local name=$1 n=$2
    shift 2
    local start end pids=() i
    start=$(date +%s.%N)
    for ((i = 0; i < n; i++)); do
        /usr/bin/time -f "%U %S" -o "$WORK/$name.time.$i" "$CRAWLER" -qq --redis "redis://127.0.0.1:$REDIS_PORT/0" \
            --crawl-id "$name" --instance "$i" -o "$WORK/$name-{instance}.jsonl" --no-report "$@" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    end=$(date +%s.%N)
    WALL=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')
    CPU=$(cat "$WORK/$name".time.* | awk '{u += $1; s += $2} END {printf "%.2f", u + s}')
}

# run_embedded NAME ARGS...: one process without Redis; sets WALL, CPU.
run_embedded() {
    local name=$1
    shift
    local start end
    start=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$WORK/$name.time" "$CRAWLER" -qq -o "$WORK/$name.jsonl" --no-report "$@"
    end=$(date +%s.%N)
    WALL=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')
    CPU=$(awk '{printf "%.2f", $1 + $2}' "$WORK/$name.time")
}

records() { cat "$WORK/$1"*.jsonl | wc -l; }

echo "# Shared crawl through Redis ($(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
if [[ " $SECTIONS " == *" latency "* ]]; then
echo "## Latency site: every answer delayed ${DELAY_MS} ms, $LATENCY_PAGES pages, max_tasks $TASKS per instance"
echo
echo "| instances | records | wall s (each round) | pages/s (median) | speed-up | CPU s (all instances, median round) |"
echo "|---|---|---|---|---|---|"
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
base=""
for n in 1 2 4; do
    walls="" rates="" cpus=""
    for ((round = 1; round <= ROUNDS; round++)); do
        start_server "$WORK/lat$n" "$BUILD/bench/asiocrawl-bench-latency-server" --delay-ms "$DELAY_MS" \
            --pages "$LATENCY_PAGES" --fanout 10 --root-fanout "$((TASKS * 4))"
        rm -f "$WORK/lat$n-"*.jsonl
        rcli FLUSHALL >/dev/null
        run_instances "lat$n" "$n" --max-tasks "$TASKS" --max-per-host 100000 --ignore-robots "$URL"
        kill "$SERVER_PID"
        got=$(records "lat$n-")
        walls+="$WALL "
        rates+="$(awk -v p="$got" -v w="$WALL" 'BEGIN {printf "%.0f", p / w}')"$'\n'
        cpus+="$CPU"$'\n'
    done
    rate=$(printf '%s' "$rates" | median)
    [[ -z $base ]] && base=$rate
    echo "| $n | $got | ${walls% } | $rate | $(awk -v r="$rate" -v b="$base" 'BEGIN {printf "%.2f", r / b}') | $(printf '%s' "$cpus" | median) |"
done
start_server "$WORK/latemb" "$BUILD/bench/asiocrawl-bench-latency-server" --delay-ms "$DELAY_MS" \
    --pages "$LATENCY_PAGES" --fanout 10 --root-fanout "$((TASKS * 4))"
run_embedded latemb --max-tasks "$TASKS" --max-per-host 100000 --ignore-robots "$URL"
kill "$SERVER_PID"
echo "| 1, embedded (no Redis) | $(records latemb) | $WALL | $(awk -v p="$(records latemb)" -v w="$WALL" 'BEGIN {printf "%.0f", p / w}') | | $CPU |"
fi
if [[ " $SECTIONS " == *" site "* ]]; then
echo
echo "## Generated site: $SITE_PAGES pages (no delay), max_tasks $TASKS per instance"
echo
echo "| run | records | wall s | pages/s | CPU s (all) | CPU us/page | Redis bytes/URL (all keys) | seen set bytes/URL |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1 2 4; do
    rcli FLUSHALL >/dev/null
    before=$(used_memory)
    start_server "$WORK/site$n" "$DEMO" --pages "$SITE_PAGES" --seed 7
    run_instances "site$n" "$n" --max-tasks "$TASKS" --max-per-host 100000 "$URL"
    kill "$SERVER_PID"
    after=$(used_memory)
    admitted=$(rcli GET "asiocrawl:{site$n}:nextid" | tr -d '\r')
    seen=0
    for key in $(rcli --scan --pattern "asiocrawl:{site$n}:s:*"); do
        seen=$((seen + $(rcli MEMORY USAGE "$key" SAMPLES 0)))
    done
    got=$(records "site$n-")
    echo "| $n shared | $got | $WALL | $(awk -v p="$got" -v w="$WALL" 'BEGIN {printf "%.0f", p / w}') | $CPU | $(awk -v c="$CPU" -v p="$got" 'BEGIN {printf "%.0f", c * 1e6 / p}') | $(awk -v a="$after" -v b="$before" -v n="$admitted" 'BEGIN {printf "%.1f", (a - b) / n}') | $(awk -v s="$seen" -v n="$admitted" 'BEGIN {printf "%.1f", s / n}') |"
done
for mode in memory state-dir; do
    start_server "$WORK/emb-$mode" "$DEMO" --pages "$SITE_PAGES" --seed 7
    extra=()
    [[ $mode == state-dir ]] && extra=(--state-dir "$WORK/state")
    run_embedded "emb-$mode" --max-tasks "$TASKS" --max-per-host 100000 "${extra[@]}" "$URL"
    kill "$SERVER_PID"
    got=$(records "emb-$mode")
    echo "| 1 embedded ($mode) | $got | $WALL | $(awk -v p="$got" -v w="$WALL" 'BEGIN {printf "%.0f", p / w}') | $CPU | $(awk -v c="$CPU" -v p="$got" 'BEGIN {printf "%.0f", c * 1e6 / p}') | | |"
done
fi
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg). CPU is user+sys of the crawler processes (/usr/bin/time), not Redis's."
