#!/usr/bin/env bash
# Continuous mode over a state directory (issue 23): the generated site (PAGES pages, 10-60 KB, nginx) crawled
# with --continuous into a state directory, every URL revisited every 1 to 2 seconds, stopped by --max-time;
# then the same command again (a resume of the schedule). Printed per run: wall s, CPU s, peak RSS, requests,
# 200s, 304s and the crawler's line on what it held in memory (the schedule on disk: entries and window).
# Usage: bench/continuous_bench.sh CRAWLER SITE_TOOL NGINX [PAGES] [SECONDS]    (default 20000 pages, 15 s)
# Environment: BENCH_DIR (work directory), TASKS (default 100).
set -euo pipefail
CRAWLER=$1
SITE_TOOL=$2
NGINX=$3
PAGES=${4:-20000}
SECONDS_RUN=${5:-15}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/asiocrawl-continuous-bench.XXXXXX)}
TASKS=${TASKS:-100}
mkdir -p "$WORK"
chmod a+x "$WORK" # nginx's workers run as nobody when it is started as root

rm -rf "$WORK/site" "$WORK/state" "$WORK"/first.* "$WORK"/resumed.*
# shellcheck source=bench/nginx_site.sh
source "$(dirname "$0")/nginx_site.sh"
serve_generated_site "$SITE_TOOL" "$NGINX" "$WORK" "$PAGES" '$request_uri $status'

crawl() { # NAME
    local name=$1
    local before
    before=$(wc -l <"$site/logs/access.log")
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/$name.time" "$CRAWLER" -v --no-report --ignore-robots \
        --max-tasks "$TASKS" --max-per-host "$TASKS" --state-dir "$WORK/state" -o "$WORK/$name.jsonl" \
        --continuous --revisit-min 1s --revisit-max 2s --max-time "${SECONDS_RUN}s" "$url" >"$WORK/$name.log" 2>&1 ||
        true
    sleep 0.2 # nginx writes its last lines
    tail -n +"$((before + 1))" "$site/logs/access.log" >"$WORK/$name.access"
}
crawl first
crawl resumed

echo "Site: $PAGES pages; $TASKS tasks, nginx on loopback; --continuous --revisit-min 1s --revisit-max 2s" \
    "--max-time ${SECONDS_RUN}s, run twice over one state directory."
echo ""
echo "| run | wall s | CPU s | peak RSS MiB | requests | 200 | 304 |"
echo "|---|---|---|---|---|---|---|"
for name in first resumed; do
    read -r wall user sys rss <"$WORK/$name.time"
    read -r n ok nm < <(awk '{n++; if ($2 == 200) ok++; if ($2 == 304) nm++} END {printf "%d %d %d\n", n, ok, nm}' \
        "$WORK/$name.access")
    printf '| %s | %s | %.2f | %d | %d | %d | %d |\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) \
        "$n" "$ok" "$nm"
done
echo ""
for name in first resumed; do
    echo "$name: $(grep -o 'continuous: at most.*' "$WORK/$name.log" | head -1 || echo 'no line on what was held')"
done
