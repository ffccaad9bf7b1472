#!/usr/bin/env bash
# HTTP/2 against HTTP/1.1 over TLS on the latency site (issue 24 item 7). One front server for both, so that
# only the client's protocol differs: nginx with `listen ssl http2` (ALPN h2 and http/1.1) in front of
# asiocrawl-bench-latency-server, which answers every page after DELAY_MS. The crawler runs with
# `--http2 auto` (h2 chosen) and `--http2 off` (HTTP/1.1), max_per_host PER_HOST.
#
# Figures: pages/s, TLS handshakes (distinct nginx connections), CPU per page, peak RSS; then memory per
# stream in flight: IN_FLIGHT fetches at once to the one host ((peak RSS busy - peak RSS of a one-task crawl) /
# IN_FLIGHT, the same for HTTP/1.1 connections).
#
# Usage: bench/h2_bench.sh [BUILD_DIR]   (default build/). Needs BUILD_DIR/asiocrawl and
#   BUILD_DIR/bench/asiocrawl-bench-latency-server (cmake -B BUILD_DIR -DASIOCRAWL_BUILD_BENCH=ON, then
#   cmake --build BUILD_DIR --target asiocrawl_cli asiocrawl-bench-latency-server), nginx and openssl.
# Environment: PAGES (default 1200), DELAY_MS (50), PER_HOST (6), IN_FLIGHT (200).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PAGES=${PAGES:-1200}
DELAY_MS=${DELAY_MS:-50}
PER_HOST=${PER_HOST:-6}
IN_FLIGHT=${IN_FLIGHT:-200}
CRAWLER=$BUILD/asiocrawl
SERVER=$BUILD/bench/asiocrawl-bench-latency-server
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for tool in "$CRAWLER" "$SERVER" "$NGINX"; do
    [[ -x $tool ]] || { echo "h2_bench: $tool is missing (see the usage at the top)" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/asiocrawl-h2-bench.XXXXXX")
PIDS=()
stop() { # by pid, each waited for (so that bash reports no kill)
    for pid in "${PIDS[@]}"; do
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
cleanup() {
    stop
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "h2_bench: nothing listens on $1" >&2
    exit 1
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 1 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null

# start PAGES ROOT_FANOUT: the latency server and nginx in front of it; sets ORIGIN and LOG.
start() {
    local pages=$1 root_fanout=$2 dir
    dir=$(mktemp -d "$WORK/run.XXXXXX")
    "$SERVER" --delay-ms "$DELAY_MS" --pages "$pages" --fanout 5 --root-fanout "$root_fanout" --page-bytes 300 \
        >"$dir/server-url" 2>"$dir/server-log" &
    PIDS+=($!)
    for _ in $(seq 100); do [[ -s $dir/server-url ]] && break; sleep 0.1; done
    local upstream port
    upstream=$(head -1 "$dir/server-url" | sed 's|^http://||; s|/$||')
    port=$(free_port)
    mkdir -p "$dir/logs" "$dir/tmp"
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  log_format bench '\$connection \$server_protocol \$status';
  access_log $dir/logs/access.log bench;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  http2_max_concurrent_streams 1024;
  keepalive_requests 100000;
  upstream latency { server $upstream; keepalive 1024; }
  server {
    listen 127.0.0.1:$port ssl http2;
    ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem;
    location / { proxy_pass http://latency; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
EOF
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" &
    PIDS+=($!)
    wait_for_port "$port"
    ORIGIN="https://localhost:$port"
    LOG=$dir/logs/access.log
}

# crawl MODE TASKS: sets WALL USER SYS RSS_KB.
crawl() {
    local mode=$1 tasks=$2
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$CRAWLER" -qq --ignore-robots --ca-file "$WORK/cert.pem" \
        --host-override localhost=127.0.0.1 --http2 "$mode" --max-tasks "$tasks" --max-per-host "$tasks" \
        "$ORIGIN/" >/dev/null 2>"$WORK/crawl-log" || true
    read -r WALL USER SYS RSS_KB <"$WORK/time"
}


echo "## h2 against HTTP/1.1 over TLS: $PAGES pages, every answer delayed $DELAY_MS ms, max_per_host $PER_HOST (nginx in front)"
echo
echo "| protocol | pages | wall s | pages/s | handshakes | CPU us/page | peak RSS MiB | protocol nginx logged |"
echo "|---|---|---|---|---|---|---|---|"
for mode in auto off; do
    start "$PAGES" "$PER_HOST"
    crawl "$mode" "$PER_HOST"
    pages=$(grep -c ' 200$' "$LOG" || true)
    handshakes=$(cut -d' ' -f1 "$LOG" | sort -u | wc -l)
    logged=$(cut -d' ' -f2 "$LOG" | sort | uniq -c | awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')
    stop
    echo "| $([[ $mode == auto ]] && echo h2 || echo http/1.1) | $pages | $WALL | $(awk -v p="$pages" -v w="$WALL" 'BEGIN {printf "%.0f", p / w}') | $handshakes | $(awk -v u="$USER" -v s="$SYS" -v p="$pages" 'BEGIN {printf "%.0f", (u + s) * 1e6 / p}') | $((RSS_KB / 1024)) | $logged |"
done

echo
echo "## Memory per fetch in flight: $IN_FLIGHT at once to one host (answers delayed $DELAY_MS ms)"
echo
echo "| protocol | peak RSS busy KiB | peak RSS one task KiB | bytes per fetch in flight | handshakes |"
echo "|---|---|---|---|---|"
for mode in auto off; do
    start "$((IN_FLIGHT + 1))" "$IN_FLIGHT"
    crawl "$mode" "$IN_FLIGHT"
    busy=$RSS_KB
    handshakes=$(cut -d' ' -f1 "$LOG" | sort -u | wc -l)
    stop
    start "$((IN_FLIGHT + 1))" "$IN_FLIGHT"
    crawl "$mode" 1
    idle=$RSS_KB
    stop
    echo "| $([[ $mode == auto ]] && echo h2 || echo http/1.1) | $busy | $idle | $(awk -v b="$busy" -v i="$idle" -v n="$IN_FLIGHT" 'BEGIN {printf "%.0f", (b - i) * 1024 / n}') | $handshakes |"
done
