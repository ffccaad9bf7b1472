#!/usr/bin/env bash
# A crawl with page requisites (-p) against nginx on loopback, beside the same crawl without them and GNU wget
# -r -p: URLs fetched and CPU time (user+sys from /usr/bin/time) of each. The site: PAGES pages of ~10 KB, each
# linking two others and needing its own image, a shared logo, script and stylesheet (which @imports another
# and refers to images), and one of ten background images in a style attribute: 2*PAGES+16 URLs with -p.
# Usage: bench/requisites_bench.sh [PAGES]   (needs build-release/asiocrawl, nginx, wget, /usr/bin/time)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PAGES=${1:-5000}
CRAWLER=${CRAWLER:-$ROOT/build-release/asiocrawl}
NGINX=${NGINX:-/usr/sbin/nginx}
WORK=$(mktemp -d /tmp/asiocrawl-requisites-bench.XXXXXX)
PORT=${PORT:-18937}
chmod 755 "$WORK"
NGINX_PID=
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

python3 - "$WORK/root" "$PAGES" <<'PY'
import os, sys
root, pages = sys.argv[1], int(sys.argv[2])
for d in ("p", "img", "css", "js"):
    os.makedirs(os.path.join(root, d), exist_ok=True)
filler = "<p>" + "lorem ipsum dolor sit amet " * 12 + "</p>\n"
for i in range(pages):
    body = ("<!doctype html><html><head><title>p%d</title>\n"
            "<link rel=stylesheet href=/css/site.css><script src=/js/app.js></script></head>\n"
            "<body style=\"background: url('/img/bg%d.png')\">\n"
            "<img src=/img/logo.png><img src=/img/%d.png>\n" % (i, i % 10, i))
    body += filler * 30
    body += "<a href=/p/%d.html>next</a> <a href=/p/%d.html>other</a></body></html>\n" % ((i + 1) % pages, (2 * i + 1) % pages)
    open(os.path.join(root, "p", "%d.html" % i), "w").write(body)
    open(os.path.join(root, "img", "%d.png" % i), "wb").write(b"\x89PNG" + os.urandom(2000))
for name in ["logo", "bg", "more"] + ["bg%d" % k for k in range(10)]:
    open(os.path.join(root, "img", name + ".png"), "wb").write(b"\x89PNG" + os.urandom(2000))
open(os.path.join(root, "css", "site.css"), "w").write("@import url(more.css);\nbody { background: url(../img/bg.png) }\n")
open(os.path.join(root, "css", "more.css"), "w").write("h1 { background: url('/img/more.png') }\n")
open(os.path.join(root, "js", "app.js"), "w").write("console.log('<img src=/img/never.png>');\n")
PY
chmod -R a+rX "$WORK"
mkdir -p "$WORK/tmp"
cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 1024; }
http {
    types { text/html html; text/css css; image/png png; text/javascript js; }
    default_type application/octet-stream;
    access_log $WORK/access.log;
    client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$PORT; root $WORK/root; }
}
CONF
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/p/0.html" && break; sleep 0.1; done
find "$WORK/root" -type f -exec cat {} + >/dev/null

echo "requisites bench: $PAGES pages, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$ROOT" rev-parse --short HEAD)"
printf '%-38s %9s %9s %9s %10s\n' crawler requests wall_s cpu_s cpu_ms/url
run() { # NAME COMMAND...
    local name=$1
    shift
    : >"$WORK/access.log"
    kill -USR1 "$NGINX_PID" # reopen the log
    sleep 0.2
    /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$@" >/dev/null 2>&1 || true
    sleep 0.2
    local wall user sys requests
    read -r wall user sys < <(tail -1 "$WORK/time")
    requests=$(grep -vc '/robots.txt' "$WORK/access.log" || true)
    printf '%-38s %9d %9.2f %9.2f %10.3f\n' "$name" "$requests" "$wall" "$(echo "$user + $sys" | bc)" \
        "$(echo "($user + $sys) * 1000 / $requests" | bc -l)"
}
url=http://127.0.0.1:$PORT/p/0.html
run "asiocrawl" "$CRAWLER" -qq --ignore-robots --no-report --max-per-host 100 "$url"
run "asiocrawl -p" "$CRAWLER" -qq --ignore-robots --no-report --max-per-host 100 -p "$url"
run "wget -r -l inf -p -nd --delete-after" wget -r -l inf -p -nd --delete-after -q -e robots=off -P "$WORK/wget" "$url"
echo "expected with -p: $((2 * PAGES + 16)) requests; without: $PAGES"
