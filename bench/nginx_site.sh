# Sourced by the benchmarks that crawl the generated site served by nginx as static files (ETag and
# Last-Modified as nginx makes them): recrawl_bench.sh, continuous_bench.sh.
# serve_generated_site SITE_TOOL NGINX WORK PAGES LOG_FORMAT
#   generates PAGES pages (10-60 KB) into WORK/site, starts nginx on it with LOG_FORMAT as its access log's
#   format (what the benchmark reads from it), waits until it answers and warms the page cache. Sets `site`,
#   `url` and `nginx_pid`; the EXIT trap stops nginx.
nginx_pid=
stop_nginx() { [[ -n $nginx_pid ]] && kill "$nginx_pid" 2>/dev/null || true; }
trap stop_nginx EXIT

serve_generated_site() {
    local site_tool=$1 nginx=$2 work=$3 pages=$4 log_format=$5 port
    site=$work/site
    "$site_tool" --out "$site" --pages "$pages" --min-bytes 10000 --max-bytes 60000 >"$work/site.txt"
    port=$(awk '$1 == "port" {print $2}' "$work/site.txt")
    sed -i "s/log_format bench '\$host \$request_uri \$status';/log_format bench '$log_format';/" "$site/nginx.conf"
    "$nginx" -p "$site" -c "$site/nginx.conf" -e "$site/logs/error.log" &
    nginx_pid=$!
    url=http://127.0.0.1:$port/
    for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.05; done
    find "$site/root" -type f -exec cat {} + >/dev/null
}
