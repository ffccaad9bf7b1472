#!/usr/bin/env bash
# Re-crawls (issue 23): the generated site (PAGES pages, 10-60 KB) served by nginx as static files (ETag and
# Last-Modified as nginx makes them) is crawled into a state directory, CHANGED percent of its HTML pages are
# edited, then the same crawl runs with --recrawl. Printed per crawl: wall s, CPU s, requests, bytes nginx sent
# (heads and bodies), 200s, 304s, and for the re-crawl how many unchanged pages did not answer 304 (target: 0)
# and its bytes as a share of the first crawl's (target: at most 15%).
# Usage: bench/recrawl_bench.sh CRAWLER SITE_TOOL NGINX [PAGES] [CHANGED]       (default 20000 pages, 5%)
# Environment: BENCH_DIR (work directory), TASKS (default 100).
set -euo pipefail
CRAWLER=$1
SITE_TOOL=$2
NGINX=$3
PAGES=${4:-20000}
CHANGED=${5:-5}
WORK=${BENCH_DIR:-$(mktemp -d /tmp/asiocrawl-recrawl-bench.XXXXXX)}
TASKS=${TASKS:-100}
mkdir -p "$WORK"
chmod a+x "$WORK" # nginx's workers run as nobody when it is started as root

rm -rf "$WORK/site" "$WORK/state" "$WORK"/first.* "$WORK"/recrawl.*
# shellcheck source=bench/nginx_site.sh
source "$(dirname "$0")/nginx_site.sh"
# A log line that says what a re-crawl changes: bytes sent and the validator.
serve_generated_site "$SITE_TOOL" "$NGINX" "$WORK" "$PAGES" '$request_uri $status $bytes_sent "$http_if_none_match"'

crawl() { # NAME ARGS...
    local name=$1
    shift
    local before
    before=$(wc -l <"$site/logs/access.log")
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/$name.time" "$CRAWLER" -q --no-report --ignore-robots \
        --max-tasks "$TASKS" --max-per-host "$TASKS" --state-dir "$WORK/state" -o "$WORK/$name.jsonl" \
        "$@" "$url" >"$WORK/$name.log" 2>&1 || true
    sleep 0.2 # nginx writes its last lines
    tail -n +"$((before + 1))" "$site/logs/access.log" >"$WORK/$name.access"
}

crawl first
# CHANGED% of the HTML pages edited: one more comment line (another size, another mtime: another ETag).
mapfile -t pages < <(find "$site/root" -name '*.html' -type f | sort)
step=$((100 / CHANGED))
edited=0
for ((i = 0; i < ${#pages[@]}; i += step)); do
    echo "<!-- edited for the re-crawl benchmark -->" >>"${pages[$i]}"
    edited=$((edited + 1))
done
sleep 1 # a Last-Modified in the next second at least
crawl recrawl --recrawl

summary() { # NAME -> "requests bytes ok not_modified"
    awk '{n++; bytes += $3; if ($2 == 200) ok++; if ($2 == 304) nm++}
         END {printf "%d %d %d %d\n", n, bytes, ok, nm}' "$WORK/$1.access"
}
read -r req1 bytes1 ok1 nm1 < <(summary first)
read -r req2 bytes2 ok2 nm2 < <(summary recrawl)
read -r wall1 user1 sys1 rss1 <"$WORK/first.time"
read -r wall2 user2 sys2 rss2 <"$WORK/recrawl.time"
# Conditional requests answered in full: the edited pages should be all of them.
conditional=$(awk '$4 != "\"-\"" && $4 != "\"\""' "$WORK/recrawl.access" | wc -l)
conditional_200=$(awk '$2 == 200 && $4 != "\"-\"" && $4 != "\"\""' "$WORK/recrawl.access" | wc -l)
changes=$(grep -o '"change":"[a-z]*"' "$WORK/recrawl.jsonl" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' |
    sed 's/"change"://g; s/, $//')

echo "Site: $PAGES pages, $edited HTML pages edited ($CHANGED%) between the crawls; $TASKS tasks, nginx on loopback."
echo ""
echo "| crawl | wall s | CPU s | peak RSS MiB | requests | bytes sent | 200 | 304 |"
echo "|---|---|---|---|---|---|---|---|"
printf '| first | %s | %.2f | %d | %d | %d | %d | %d |\n' "$wall1" "$(echo "$user1 + $sys1" | bc)" $((rss1 / 1024)) \
    "$req1" "$bytes1" "$ok1" "$nm1"
printf '| --recrawl | %s | %.2f | %d | %d | %d | %d | %d |\n' "$wall2" "$(echo "$user2 + $sys2" | bc)" \
    $((rss2 / 1024)) "$req2" "$bytes2" "$ok2" "$nm2"
echo ""
echo "Re-crawl bytes: $(awk -v a="$bytes2" -v b="$bytes1" 'BEGIN {printf "%.1f%%", 100 * a / b}') of the first crawl's;"\
     "wall time $(awk -v a="$wall2" -v b="$wall1" 'BEGIN {printf "%.0f%%", 100 * a / b}')."
echo "Conditional requests: $conditional; answered in full (200): $conditional_200, of which edited pages: at most $edited."
echo "Unchanged pages answered in full (target 0): $((conditional_200 > edited ? conditional_200 - edited : 0)) at least."
echo "Records of the re-crawl by change: $changes."
