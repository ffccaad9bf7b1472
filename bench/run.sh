#!/usr/bin/env bash
# asiocrawl benchmarks (see bench/README.md). One command:
#   bench/run.sh [--quick] [--rounds N] [throughput] [latency] [memory] [memory-tls] [dns] [seen-set]
#                [state] [state-store] [recrawl] [continuous]                               (default: all)
# Installs nginx, wget, wget2 and time from Debian when missing, builds the Release tools in build-release/,
# runs the benchmarks and prints their tables (also written to $BENCH_DIR/results.md).
# Environment: BENCH_DIR (work directory, default a new /tmp/asiocrawl-bench.XXXXXX), BUILD_DIR (default
# build-release), JOBS (build parallelism, default 1), PAGES (throughput site size, default 20000),
# MIX (link mix, default below), TASKS (asiocrawl --max-tasks for throughput, default 100),
# LATENCY_TASKS (default "100 1000 10000"), DELAY_MS (default 50), MEMORY_FETCHES (default 10000),
# TLS_FETCHES (HTTPS and plain HTTP fetches in flight for memory-tls, default 5000), TLS_DELAY_MS (their
# answers' delay, default 25000: long enough for every handshake to end first), DNS_NAMES (default 500),
# DNS_DELAY_MS (the test resolver's delay, default 100), DNS_TASKS (default 100),
# CRAWL_TIMEOUT (seconds one crawl may take, default 300; a crawler stopped by it is marked "(timeout)"),
# ASIOCRAWL_FLAGS (extra flags for every asiocrawl run), CRAWLERS (the throughput table's crawlers to run,
# default all: asiocrawl asiocrawl-p2 asiocrawl-gumbo asiocrawl-state wget wget2), BASELINE_CRAWLER (another
# asiocrawl binary, e.g. a build of the commit before a change: its default and --parse-threads runs join the
# throughput table as asiocrawl-baseline and asiocrawl-baseline-pN, for a before/after in the same run).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-release}
JOBS=${JOBS:-1}
QUICK=0
ROUNDS=${ROUNDS:-} # the environment's, unless --rounds says
WHICH=()
while (($#)); do
    case $1 in
    --quick) QUICK=1 ;;
    --rounds) ROUNDS=$2; shift ;;
    throughput | latency | memory | memory-tls | dns | seen-set | state | state-store | recrawl | continuous)
        WHICH+=("$1") ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
((${#WHICH[@]})) || WHICH=(throughput latency memory memory-tls dns seen-set state state-store recrawl continuous)
if ((QUICK)); then
    PAGES=${PAGES:-2000} ROUNDS=${ROUNDS:-1} LATENCY_TASKS=${LATENCY_TASKS:-"100 1000"}
    MEMORY_FETCHES=${MEMORY_FETCHES:-2000} SEEN_URLS=${SEEN_URLS:-200000} TLS_FETCHES=${TLS_FETCHES:-1000}
    STATE_URLS=${STATE_URLS:-200000} STORE_URLS=${STORE_URLS:-1000000}
fi
PAGES=${PAGES:-20000}
ROUNDS=${ROUNDS:-2}
LATENCY_TASKS=${LATENCY_TASKS:-"100 1000 10000"}
MEMORY_FETCHES=${MEMORY_FETCHES:-10000}
SEEN_URLS=${SEEN_URLS:-1000000}
TLS_FETCHES=${TLS_FETCHES:-5000}
TLS_DELAY_MS=${TLS_DELAY_MS:-25000}
STATE_URLS=${STATE_URLS:-"1000000 10000000"}
STORE_URLS=${STORE_URLS:-10000000}
DNS_NAMES=${DNS_NAMES:-500}
DNS_DELAY_MS=${DNS_DELAY_MS:-100}
DNS_TASKS=${DNS_TASKS:-100}
DELAY_MS=${DELAY_MS:-50}
RECRAWL_CHANGED=${RECRAWL_CHANGED:-5}
TASKS=${TASKS:-100}
CRAWL_TIMEOUT=${CRAWL_TIMEOUT:-300}
# Every kind of link the generator makes, content links still the majority.
MIX=${MIX:-"broken=2,fragment=3,off_site=1,off_host=1,non_http=1,redirect=2,query=2,relative=10,absolute=5,styled=73,base_pages=5"}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/asiocrawl-bench.XXXXXX)}
mkdir -p "$WORK"
# mktemp makes the directory 0700; nginx started as root serves from worker processes running as nobody, which
# must be able to reach the exported site below it (else every request is a 404 and the table measures nothing).
chmod a+x "$WORK"
RESULTS=$WORK/results.md
: >"$RESULTS"

say() { printf '%s\n' "$*" | tee -a "$RESULTS"; }
log() { printf '[bench] %s\n' "$*" >&2; }

# ---- dependencies and build ---------------------------------------------------------------------------------
install_missing() {
    local missing=()
    command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
    command -v wget >/dev/null || missing+=(wget)
    command -v wget2 >/dev/null || missing+=(wget2)
    [[ -x /usr/bin/time ]] || missing+=(time)
    command -v curl >/dev/null || missing+=(curl)
    command -v bc >/dev/null || missing+=(bc)
    # The state store comparison measures the candidates beside RocksDB (the product's store).
    [[ -f /usr/include/lmdb.h ]] || missing+=(liblmdb-dev)
    [[ -f /usr/include/sqlite3.h ]] || missing+=(libsqlite3-dev)
    # memory-tls sets OpenSSL's per-connection state beside what a GnuTLS or mbedTLS client keeps.
    [[ -f /usr/include/gnutls/gnutls.h ]] || missing+=(libgnutls28-dev)
    [[ -f /usr/include/mbedtls/ssl.h ]] || missing+=(libmbedtls-dev)
    ((${#missing[@]})) || return 0
    log "installing ${missing[*]}"
    local sudo=
    ((EUID == 0)) || sudo=sudo
    $sudo apt-get update -qq
    # wget2 is optional: the comparison runs without it when the package cannot be installed.
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
        $sudo apt-get install -y --no-install-recommends "${missing[@]/wget2/}" >/dev/null
}
install_missing
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
log "building Release tools in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DASIOCRAWL_BUILD_BENCH=ON \
    -DASIOCRAWL_BUILD_TESTS=OFF -DASIOCRAWL_BUILD_DEMO=OFF "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target asiocrawl_cli asiocrawl-bench-site asiocrawl-bench-score \
    asiocrawl-bench-latency-server asiocrawl-bench-seen-set asiocrawl-bench-parse-rate asiocrawl-bench-dns >/dev/null
# Built only when the comparison's libraries were found.
cmake --build "$BUILD" -j"$JOBS" --target asiocrawl-bench-state-store >/dev/null 2>&1 || true
cmake --build "$BUILD" -j"$JOBS" --target asiocrawl-bench-tls-state >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target asiocrawl-bench-tls-state-gnutls >/dev/null 2>&1 || true
cmake --build "$BUILD" -j"$JOBS" --target asiocrawl-bench-tls-state-mbedtls >/dev/null 2>&1 || true
CRAWLER=$BUILD/asiocrawl
TOOLS=$BUILD/bench

# Flags of the crawler under test that make it comparable to wget -e robots=off, when this build has them.
crawler_help=$("$CRAWLER" --help 2>&1 || true)
# ASIOCRAWL_FLAGS: extra flags for every asiocrawl run (e.g. "--parse-threads 2"), split on spaces.
read -r -a extra_flags <<<"${ASIOCRAWL_FLAGS:-}"
COMMON_FLAGS=(-qq "${extra_flags[@]}")
grep -q -- '--ignore-robots' <<<"$crawler_help" && COMMON_FLAGS+=(--ignore-robots)
per_host_flags() { # the per-host connection cap must not be what limits a single-host benchmark
    grep -q -- '--max-per-host' <<<"$crawler_help" && echo "--max-per-host $1" || true
}

PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

wait_for_http() { # URL: up to 10 s (https: the benchmark's own throwaway certificate)
    for _ in $(seq 100); do
        curl -sk -o /dev/null "$1" && return 0
        sleep 0.1
    done
    echo "bench/run.sh: nothing answers at $1" >&2
    exit 1
}

# /usr/bin/time -f "%e %U %S %M": wall s, user s, system s, peak RSS KiB.
timed() { # OUT_PREFIX COMMAND...
    local out=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$out.time" timeout "$CRAWL_TIMEOUT" "$@" >"$out.log" 2>&1 || true
    TIMED_OUT=0
    if grep -q 'status 124' "$out.time"; then TIMED_OUT=1; fi
    read -r WALL USER_S SYS_S RSS_KB <"$out.time" || { tail -3 "$out.time" >&2; WALL=0 USER_S=0 SYS_S=0 RSS_KB=0; }
    # A failing command writes "Command exited with non-zero status N" first.
    if ! [[ $WALL =~ ^[0-9.]+$ ]]; then read -r WALL USER_S SYS_S RSS_KB < <(tail -1 "$out.time"); fi
}

machine() {
    echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

say "# asiocrawl benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
say ""
say "Machine: $(machine). asiocrawl flags: ${COMMON_FLAGS[*]}. asiocrawl $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), $("$NGINX" -v 2>&1 | cut -d' ' -f3), $(wget --version | head -1 | cut -d' ' -f1-3)$(command -v wget2 >/dev/null && echo ", $(wget2 --version | head -1 | cut -d' ' -f1-3)")."

# ---- 1. throughput against nginx ----------------------------------------------------------------------------
throughput() {
    local site=$WORK/site
    log "generating $PAGES pages into $site"
    "$TOOLS/asiocrawl-bench-site" --out "$site" --pages "$PAGES" --min-bytes 10000 --max-bytes 60000 \
        --mix "$MIX" >"$WORK/site.txt"
    local port files bytes expected
    port=$(awk '$1 == "port" {print $2}' "$WORK/site.txt")
    files=$(awk '$1 == "files" {print $2}' "$WORK/site.txt")
    bytes=$(awk '$1 == "bytes" {print $2}' "$WORK/site.txt")
    expected=$(awk '$1 == "expected" {print $2}' "$WORK/site.txt")
    "$NGINX" -p "$site" -c "$site/nginx.conf" -e "$site/logs/error.log" &
    PIDS+=($!)
    local url=http://127.0.0.1:$port/
    wait_for_http "$url"
    find "$site/root" -type f -exec cat {} + >/dev/null # page cache warm for the first crawler too

    # asiocrawl as configured by default (parsing on the crawl thread), and with a parse thread per core.
    local -a crawlers=(asiocrawl)
    local parse_threads
    parse_threads=$(nproc)
    grep -q -- '--parse-threads' <<<"$crawler_help" && crawlers+=("asiocrawl-p$parse_threads")
    # The fast parser is the default; gumbo (--html-parser gumbo) runs too when this build has the flag.
    grep -q -- '--html-parser' <<<"$crawler_help" && crawlers+=(asiocrawl-gumbo)
    # The same default crawl with its state kept crash-safe on disk (issue 12: at least 90% of the pages/s).
    grep -q -- '--state-dir' <<<"$crawler_help" && crawlers+=(asiocrawl-state)
    [[ -n ${BASELINE_CRAWLER:-} ]] && crawlers+=(asiocrawl-baseline "asiocrawl-baseline-p$parse_threads")
    crawlers+=(wget)
    command -v wget2 >/dev/null && crawlers+=(wget2)
    # CRAWLERS: run only these of them (e.g. "asiocrawl asiocrawl-state").
    if [[ -n ${CRAWLERS:-} ]]; then
        local -a chosen=()
        local c
        for c in "${crawlers[@]}"; do [[ " $CRAWLERS " == *" $c "* ]] && chosen+=("$c"); done
        crawlers=("${chosen[@]}")
    fi
    local parse_rate default_rate html_rate html_pages ceiling
    parse_rate=$("$TOOLS/asiocrawl-bench-parse-rate" "$site/root" 2)
    default_rate=$(grep -m1 '^fast:' <<<"$parse_rate" || head -1 <<<"$parse_rate")
    html_rate=$(grep -o '[0-9]* pages/s' <<<"$default_rate" | cut -d' ' -f1)
    html_pages=$(grep -o 'pages [0-9]*' <<<"$default_rate" | head -1 | cut -d' ' -f2)
    # In the table's unit (ground-truth URLs per second): only the HTML pages among them cost a parse.
    ceiling=$(awk -v r="$html_rate" -v c="$(nproc)" -v e="$expected" -v h="$html_pages" 'BEGIN {printf "%.0f", r * c * e / h}')
    say ""
    say "## Throughput: $PAGES pages ($files files, $((bytes / 1048576)) MiB, 10-60 KB pages), nginx on loopback"
    say ""
    say "Ground truth: $expected requests. Link mix: $MIX."
    say ""
    say "Link extraction alone (extract_links, no network) over the site's HTML files, one core:"
    say ""
    say '```'
    say "$parse_rate"
    say '```'
    say ""
    say "Parse-bound ceiling with the default parser: $(nproc) cores x $html_rate HTML pages/s = **$ceiling pages/s** in this"
    say "table's unit (ground-truth URLs, of which $html_pages of $expected are HTML pages to parse), if nothing but"
    say "parsing used the cores."
    say ""
    say "| round | crawler | wall s | pages/s | CPU s | peak RSS MiB | requests | missed | wrong | duplicates |"
    say "|---|---|---|---|---|---|---|---|---|---|"
    local round crawler
    for round in $(seq "$ROUNDS"); do
        for crawler in "${crawlers[@]}"; do
            local out=$WORK/tp-$round-$crawler
            local before
            before=$(wc -l <"$site/logs/access.log")
            rm -rf "$WORK/download"
            case $crawler in
            asiocrawl)
                # shellcheck disable=SC2046
                timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") "$url" ;;
            asiocrawl-baseline)
                # shellcheck disable=SC2046
                timed "$out" "$BASELINE_CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") \
                    "$url" ;;
            asiocrawl-baseline-p*)
                # shellcheck disable=SC2046
                timed "$out" "$BASELINE_CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") \
                    --parse-threads "$parse_threads" "$url" ;;
            asiocrawl-p*)
                # shellcheck disable=SC2046
                timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") \
                    --parse-threads "$parse_threads" "$url" ;;
            asiocrawl-state)
                rm -rf "$WORK/state"
                # shellcheck disable=SC2046
                timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") \
                    --state-dir "$WORK/state" "$url" ;;
            asiocrawl-gumbo)
                # shellcheck disable=SC2046
                timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$TASKS" $(per_host_flags "$TASKS") \
                    --html-parser gumbo "$url" ;;
            wget)
                timed "$out" wget -r -l inf -nd --delete-after -q -e robots=off --max-redirect=10 \
                    -P "$WORK/download" "$url" ;;
            wget2)
                timed "$out" wget2 -r -l inf -nd --delete-after -q --robots=off --max-redirect=10 \
                    --max-threads=10 --tries=1 -P "$WORK/download" "$url" ;;
            esac
            sleep 0.2 # nginx writes the last log lines
            tail -n +"$((before + 1))" "$site/logs/access.log" >"$out.access"
            local score requests missed wrong duplicates
            score=$("$TOOLS/asiocrawl-bench-score" "$site/expected.txt" "$out.access" 127.0.0.1)
            requests=$(grep -o 'requests=[0-9]*' <<<"$score" | cut -d= -f2)
            missed=$(grep -o 'missed=[0-9]*' <<<"$score" | cut -d= -f2)
            wrong=$(grep -o 'wrong=[0-9]*' <<<"$score" | cut -d= -f2)
            duplicates=$(grep -o 'duplicates=[0-9]*' <<<"$score" | cut -d= -f2)
            ((TIMED_OUT)) && crawler+=" (timeout)"
            say "| $round | $crawler | $WALL | $(awk -v n="$((expected - missed))" -v t="$WALL" 'BEGIN {printf "%.0f", (t > 0 ? n / t : 0)}') | $(awk -v u="$USER_S" -v s="$SYS_S" 'BEGIN {printf "%.2f", u + s}') | $((RSS_KB / 1024)) | $requests | $missed | $wrong | $duplicates |"
        done
    done
    say ""
    say "pages/s: ground-truth URLs fetched / wall time. wrong: distinct requests outside the ground truth (another"
    say "host name for the same server, e.g. localhost, counts as wrong; /robots.txt does not)."
    kill "${PIDS[-1]}" 2>/dev/null || true
}

# ---- 2. latency ---------------------------------------------------------------------------------------------
start_latency_server() { # OUT_PREFIX SERVER_ARGS...: sets SERVER_URL
    local out=$1
    shift
    "$TOOLS/asiocrawl-bench-latency-server" "$@" >"$out.server-url" 2>"$out.server-log" &
    PIDS+=($!)
    SERVER_PID=$!
    for _ in $(seq 100); do
        [[ -s $out.server-url ]] && break
        sleep 0.1
    done
    SERVER_URL=$(head -1 "$out.server-url")
    wait_for_http "${SERVER_URL}__stats"
}
stat_of() { grep -o "\"$2\":[0-9]*" <<<"$1" | cut -d: -f2; }
server_stats() { curl -sk "${SERVER_URL}__stats"; }

latency_table() { # TITLE FANOUT PAGE_BYTES
    local fanout=$2 page_bytes=$3
    say ""
    say "## Latency, $1: every answer delayed ${DELAY_MS} ms, pages of ${page_bytes}+ bytes with $fanout links, pages = 20 x max_tasks (min 2000)"
    say ""
    say "| max_tasks | pages | wall s | ideal s | wall/ideal | CPU s | CPU us/page | peak RSS MiB | peak in flight | peak connections | requests |"
    say "|---|---|---|---|---|---|---|---|---|---|---|"
    local tasks
    for tasks in $LATENCY_TASKS; do
        local pages=$((tasks * 20 < 2000 ? 2000 : tasks * 20))
        local out=$WORK/lat-$fanout-$tasks
        start_latency_server "$out" --delay-ms "$DELAY_MS" --pages "$pages" --fanout "$fanout" --root-fanout "$tasks" \
            --page-bytes "$page_bytes"
        # shellcheck disable=SC2046
        timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$tasks" $(per_host_flags "$tasks") "$SERVER_URL"
        ((TIMED_OUT)) && WALL+=" (timeout)"
        local stats
        stats=$(curl -s "${SERVER_URL}__stats")
        kill "$SERVER_PID"
        say "| $tasks | $pages | $WALL | $(awk -v p="$pages" -v d="$DELAY_MS" -v t="$tasks" 'BEGIN {printf "%.2f", p * d / 1000 / t}') | $(awk -v p="$pages" -v d="$DELAY_MS" -v t="$tasks" -v w="${WALL%% *}" 'BEGIN {printf "%.2f", w / (p * d / 1000 / t)}') | $(awk -v u="$USER_S" -v s="$SYS_S" 'BEGIN {printf "%.2f", u + s}') | $(awk -v u="$USER_S" -v s="$SYS_S" -v p="$pages" 'BEGIN {printf "%.0f", (u + s) * 1e6 / p}') | $((RSS_KB / 1024)) | $(stat_of "$stats" peak_in_flight) | $(stat_of "$stats" peak_open_connections) | $(stat_of "$stats" requests) |"
    done
}

latency() {
    # Light pages measure what waiting costs; 2 KB pages of 50 links add the parse and URL work of each page,
    # which bounds the rate once max_tasks / delay exceeds what the cores can process.
    latency_table "light pages" 5 300
    latency_table "2 KB pages" 50 2000
    say ""
    say "ideal = pages x delay / max_tasks: the wall time if every fetch overlapped perfectly and cost no CPU. It"
    say "needs pages / ideal = max_tasks / delay pages per second (20,000/s at 1,000 tasks, 200,000/s at 10,000),"
    say "on the same 2 cores as the server. CPU us/page is the crawler's user + system time per page."
}

# ---- 3. memory ----------------------------------------------------------------------------------------------
memory() {
    local n=$MEMORY_FETCHES
    say ""
    say "## Memory: $n fetches in flight at once (root links to $n pages of 2,000 bytes, answers delayed 2 s)"
    say ""
    local out=$WORK/mem-busy
    start_latency_server "$out" --delay-ms 2000 --pages "$((n + 1))" --root-fanout "$n"
    # shellcheck disable=SC2046
    timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks "$n" $(per_host_flags "$n") "$SERVER_URL"
    local busy_kb=$RSS_KB busy_wall=$WALL stats
    stats=$(curl -s "${SERVER_URL}__stats")
    kill "$SERVER_PID"
    local in_flight
    in_flight=$(stat_of "$stats" peak_in_flight)
    # The baseline: the same crawl (same seen set, queue and pages) one fetch at a time, without delay.
    out=$WORK/mem-idle
    start_latency_server "$out" --delay-ms 0 --pages "$((n + 1))" --root-fanout "$n"
    timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" --max-tasks 1 "$SERVER_URL"
    local idle_kb=$RSS_KB
    kill "$SERVER_PID"
    say "| run | max_tasks | peak in flight (server) | wall s | peak RSS MiB |"
    say "|---|---|---|---|---|"
    say "| busy | $n | $in_flight | $busy_wall | $((busy_kb / 1024)) |"
    say "| baseline | 1 | 1 | $WALL | $((idle_kb / 1024)) |"
    say ""
    say "**Bytes per in-flight fetch: $(awk -v b="$busy_kb" -v i="$idle_kb" -v n="$in_flight" 'BEGIN {printf "%.0f", (n > 0 ? (b - i) * 1024 / n : 0)}')** ((peak RSS busy - baseline) / peak in flight)."
}

# ---- 3b. memory of HTTPS fetches -----------------------------------------------------------------------------
memory_tls() {
    local n=$TLS_FETCHES
    say ""
    say "## Memory of HTTPS: $n fetches in flight at once, over TLS and over plain HTTP (answers delayed $TLS_DELAY_MS ms)"
    say ""
    say "| scheme | run | max_tasks | peak in flight (server) | wall s | CPU s | peak RSS MiB |"
    say "|---|---|---|---|---|---|---|"
    local scheme per_fetch=()
    for scheme in https http; do
        local tls_args=() ca_args=()
        if [[ $scheme == https ]]; then
            tls_args=(--tls-ca-out "$WORK/tls-ca.pem")
            ca_args=(--ca-file "$WORK/tls-ca.pem")
        fi
        local out=$WORK/mem-$scheme-busy
        start_latency_server "$out" --delay-ms "$TLS_DELAY_MS" --pages "$((n + 1))" --root-fanout "$n" "${tls_args[@]}"
        # shellcheck disable=SC2046
        timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" "${ca_args[@]}" --max-tasks "$n" $(per_host_flags "$n") "$SERVER_URL"
        local busy_kb=$RSS_KB busy_wall=$WALL busy_cpu stats in_flight
        busy_cpu=$(awk -v u="$USER_S" -v s="$SYS_S" 'BEGIN {printf "%.2f", u + s}')
        stats=$(server_stats)
        kill "$SERVER_PID"
        in_flight=$(stat_of "$stats" peak_in_flight)
        out=$WORK/mem-$scheme-idle
        start_latency_server "$out" --delay-ms 0 --pages "$((n + 1))" --root-fanout "$n" "${tls_args[@]}"
        timed "$out" "$CRAWLER" "${COMMON_FLAGS[@]}" "${ca_args[@]}" --max-tasks 1 "$SERVER_URL"
        local idle_kb=$RSS_KB
        kill "$SERVER_PID"
        say "| $scheme | busy | $n | $in_flight | $busy_wall | $busy_cpu | $((busy_kb / 1024)) |"
        say "| $scheme | baseline | 1 | 1 | $WALL | $(awk -v u="$USER_S" -v s="$SYS_S" 'BEGIN {printf "%.2f", u + s}') | $((idle_kb / 1024)) |"
        per_fetch+=("$scheme $(awk -v b="$busy_kb" -v i="$idle_kb" -v n="$in_flight" 'BEGIN {printf "%.0f", (n > 0 ? (b - i) * 1024 / n : 0)}')")
    done
    say ""
    say "**Bytes per in-flight fetch: ${per_fetch[0]#https } over HTTPS, ${per_fetch[1]#http } over plain HTTP** ((peak RSS busy - baseline) / peak in flight)."
    say ""
    say "What a waiting TLS client connection keeps, by library and by OpenSSL allocation site (1,000 connections):"
    say ""
    say '```'
    say "$("$TOOLS/asiocrawl-bench-tls-state" --connections 1000)"
    say "$("$TOOLS/asiocrawl-bench-tls-state" --connections 1000 --by-site | tail -n +2)"
    [[ -x $TOOLS/asiocrawl-bench-tls-state-gnutls ]] && say "$("$TOOLS/asiocrawl-bench-tls-state-gnutls" --connections 1000)"
    [[ -x $TOOLS/asiocrawl-bench-tls-state-mbedtls ]] && say "$("$TOOLS/asiocrawl-bench-tls-state-mbedtls")"
    say '```'
}

# ---- 3c. DNS at crawl scale ---------------------------------------------------------------------------------
dns() {
    say ""
    say "## DNS: $DNS_NAMES host names, each answered by the test resolver after $DNS_DELAY_MS ms, max_tasks $DNS_TASKS"
    say ""
    local out=$WORK/dns
    timed "$out" "$TOOLS/asiocrawl-bench-dns" --names "$DNS_NAMES" --delay-ms "$DNS_DELAY_MS" --max-tasks "$DNS_TASKS"
    say '```'
    say "$(cat "$out.log")"
    say "process: wall $WALL s, user+sys $(awk -v u="$USER_S" -v s="$SYS_S" 'BEGIN {printf "%.2f", u + s}') s, peak RSS $((RSS_KB / 1024)) MiB"
    say '```'
}

seen_set() {
    say ""
    say "## Seen set: $SEEN_URLS synthetic URLs in asiocrawl::detail::fingerprint_set"
    say ""
    say '```'
    say "$("$TOOLS/asiocrawl-bench-seen-set" "$SEEN_URLS")"
    say '```'
}

# ---- 5. durable state at scale --------------------------------------------------------------------------------
state() {
    say ""
    say "## Durable state: a crawl with --state-dir discovering $STATE_URLS URLs (latency server, fan-out 50)"
    say ""
    say '```'
    # shellcheck disable=SC2086
    say "$(BENCH_DIR=$WORK/state-bench TASKS=$TASKS "$ROOT/bench/state_bench.sh" "$CRAWLER" \
        "$TOOLS/asiocrawl-bench-latency-server" $STATE_URLS)"
    say '```'
}

state_store() {
    say ""
    say "## State store candidates: $STORE_URLS URLs"
    say ""
    if [[ ! -x $TOOLS/asiocrawl-bench-state-store ]]; then
        say "(not built: liblmdb-dev and libsqlite3-dev are needed)"
        return 0
    fi
    say '```'
    say "$("$TOOLS/asiocrawl-bench-state-store" --urls "$STORE_URLS" --dir "$WORK/store-bench")"
    say '```'
}

# ---- 7. re-crawls ----------------------------------------------------------------------------------------------
recrawl() {
    say ""
    say "## Re-crawl: the site crawled, $RECRAWL_CHANGED% of its pages edited, crawled again with --recrawl"
    say ""
    say "$(BENCH_DIR=$WORK/recrawl-bench TASKS=$TASKS "$ROOT/bench/recrawl_bench.sh" "$CRAWLER" \
        "$TOOLS/asiocrawl-bench-site" "$NGINX" "$PAGES" "$RECRAWL_CHANGED")"
}

# ---- 8. continuous mode ----------------------------------------------------------------------------------------
continuous() {
    say ""
    say "## Continuous mode: the site crawled with --continuous into a state directory, then resumed"
    say ""
    say "$(BENCH_DIR=$WORK/continuous-bench TASKS=$TASKS "$ROOT/bench/continuous_bench.sh" "$CRAWLER" \
        "$TOOLS/asiocrawl-bench-site" "$NGINX" "$PAGES" 15)"
}

for b in "${WHICH[@]}"; do
    case $b in
    throughput) throughput ;;
    latency) latency ;;
    memory) memory ;;
    memory-tls) memory_tls ;;
    dns) dns ;;
    seen-set) seen_set ;;
    state) state ;;
    state-store) state_store ;;
    recrawl) recrawl ;;
    continuous) continuous ;;
    esac
done
log "results in $RESULTS"
