#!/usr/bin/env bash
# Hostile floods against the release CLI (see bench/README.md, "Hostile floods"): for each flood of
# asiocrawl-bench-flood-server, a crawl of a root page linking to the flood and two good pages, the flood
# streaming up to VOLUME bytes (counted server-side; it stops there or when the client hangs up). Prints per
# attack: the bytes the server sent before the client gave up, the flood URL's error_kind (JSON Lines record),
# wall time, peak RSS and RSS above an idle crawl (the same root with only the good pages), then the verdict
# against TARGET_MIB; then the same for wget and wget2 (when installed) fetching the flood URL alone.
# Usage: bench/hostile_bench.sh [FLOOD...]          (default: every flood; --list names them)
# Environment: BUILD_DIR (default build/, scripts/build.sh's RelWithDebInfo tree: the benchmark option is
# turned on there and only the CLI and the flood server are built; a new tree is configured RelWithDebInfo),
# CRAWLER and FLOOD_SERVER (use these binaries instead, nothing built), VOLUME (bytes, default 1 GiB),
# TIMEOUT (seconds per attack, default 300), PEER_TIMEOUT (the same for wget and wget2, default 60),
# TARGET_MIB (default 64), PEERS (default "wget wget2"),
# BENCH_DIR (work directory, default a new /tmp/asiocrawl-hostile.XXXXXX, removed at the end unless given).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
VOLUME=${VOLUME:-1073741824}
TIMEOUT=${TIMEOUT:-300}
PEER_TIMEOUT=${PEER_TIMEOUT:-60}
TARGET_MIB=${TARGET_MIB:-64}
PEERS=${PEERS:-"wget wget2"}
# The floods that are a body: they need a body limit above VOLUME to stream it all. Each runs twice, with the
# default limit (16 MiB) and with --max-body-size 2GiB.
BODY_FLOODS=" chunked-body close-body content-length "

log() { printf '[hostile] %s\n' "$*" >&2; }

# ---- dependencies and build ---------------------------------------------------------------------------------
install_missing() {
    local missing=()
    command -v wget >/dev/null || missing+=(wget)
    command -v wget2 >/dev/null || missing+=(wget2)
    [[ -x /usr/bin/time ]] || missing+=(time)
    command -v python3 >/dev/null || missing+=(python3)
    ((${#missing[@]})) || return 0
    log "installing ${missing[*]}"
    local sudo=
    ((EUID == 0)) || sudo=sudo
    $sudo apt-get update -qq
    # wget and wget2 are comparisons only: the benchmark runs without them when they cannot be installed.
    $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
        $sudo apt-get install -y --no-install-recommends time python3 >/dev/null
}
install_missing

if [[ -z ${CRAWLER:-} || -z ${FLOOD_SERVER:-} ]]; then
    if [[ -f $BUILD/CMakeCache.txt ]]; then
        cmake -S "$ROOT" -B "$BUILD" -DASIOCRAWL_BUILD_BENCH=ON >/dev/null
    else
        launcher=()
        command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
        cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASIOCRAWL_BUILD_BENCH=ON \
            "${launcher[@]}" >/dev/null
    fi
    log "building asiocrawl and the flood server in $BUILD"
    cmake --build "$BUILD" -j"${JOBS:-2}" --target asiocrawl_cli asiocrawl-bench-flood-server >/dev/null
fi
CRAWLER=${CRAWLER:-$BUILD/asiocrawl}
FLOOD_SERVER=${FLOOD_SERVER:-$BUILD/bench/asiocrawl-bench-flood-server}

FLOODS=("$@")
if ((${#FLOODS[@]} == 1)) && [[ ${FLOODS[0]} == --list ]]; then
    "$FLOOD_SERVER" --list
    exit 0
fi
((${#FLOODS[@]})) || mapfile -t FLOODS < <("$FLOOD_SERVER" --list)

if [[ -n ${BENCH_DIR:-} ]]; then
    WORK=$BENCH_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d /tmp/asiocrawl-hostile.XXXXXX)
fi
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    [[ -n ${BENCH_DIR:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT

FLOOD_LOG=$WORK/floods.log
"$FLOOD_SERVER" --log "$FLOOD_LOG" --volume "$VOLUME" >"$WORK/port" &
SERVER_PID=$!
for _ in $(seq 100); do
    [[ -s $WORK/port ]] && break
    sleep 0.1
done
PORT=$(head -1 "$WORK/port")
[[ -n $PORT ]] || { echo "bench/hostile_bench.sh: the flood server did not start" >&2; exit 1; }
ORIGIN=http://127.0.0.1:$PORT

# One client run under /usr/bin/time, bounded by TIMEOUT (timeout kills it, and -k 5 s later with SIGKILL):
# sets WALL, RSS_KIB, STATUS, BYTES (sum over the flood's connections), CONNECTIONS and ENDS (why each ended).
measure() { # NAME COMMAND...
    local name=$1
    shift
    : >"$FLOOD_LOG"
    /usr/bin/time -f "%e %M %x" -o "$WORK/time" timeout -k 5 "${LIMIT:-$TIMEOUT}" "$@" >"$WORK/out" 2>"$WORK/err" ||
        true
    sleep 0.3 # the server logs a flood when its connection ends, which may be just after the client's exit
    read -r WALL RSS_KIB STATUS < <(tail -1 "$WORK/time")
    [[ $STATUS == 124 || $STATUS == 137 ]] && STATUS="timeout"
    BYTES=$(awk -v n="$name" '$1 == n { s += $2 } END { printf "%.0f", s }' "$FLOOD_LOG")
    CONNECTIONS=$(awk -v n="$name" '$1 == n { c++ } END { print c + 0 }' "$FLOOD_LOG")
    ENDS=$(awk -v n="$name" '$1 == n { print $3 }' "$FLOOD_LOG" | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }')
    [[ -n $ENDS ]] || ENDS=-
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
above() { awk -v k="$1" -v b="$2" 'BEGIN { printf "%.1f", (k - b) / 1024 }'; }

CRAWL_FLAGS=(-q --no-report --ignore-robots)
echo "hostile floods: volume $VOLUME bytes, timeout ${TIMEOUT} s per attack, target <= $TARGET_MIB MiB above idle"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC'), asiocrawl $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo

measure idle "$CRAWLER" "${CRAWL_FLAGS[@]}" -o "$WORK/idle.jsonl" --overwrite "$ORIGIN/idle"
IDLE_KIB=$RSS_KIB
echo "asiocrawl, idle crawl (root + 2 good pages): peak RSS $(mib "$IDLE_KIB") MiB, wall $WALL s, exit $STATUS"
echo
printf '| %-34s | %13s | %-16s | %-30s | %6s | %8s | %9s | %-7s |\n' flood "bytes sent" "ended by" error_kind \
    "wall s" "RSS MiB" "above MiB" verdict
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..15})" \
    "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..32})" "$(printf -- '-%.0s' {1..8})" \
    "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..9})"
failures=0
rows=0
held=0
# ALLOWED_MIB: memory the configuration itself asks for (a raised --max-body-size keeps a body up to it);
# such a row is judged against it plus the target, and counted apart.
row() { # LABEL NAME ALLOWED_MIB EXTRA_FLAGS...
    local label=$1 name=$2 allowed=$3
    shift 3
    measure "$name" "$CRAWLER" "${CRAWL_FLAGS[@]}" "$@" -o "$WORK/records.jsonl" --overwrite "$ORIGIN/root/$name"
    local kind good
    kind=$(python3 - "$WORK/records.jsonl" "$ORIGIN/flood/$name" <<'PY'
import json, sys
kind = "(no record)"
good = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["url"] == sys.argv[2]:
        kind = r.get("error_kind") or "ok %d" % r.get("status", 0)
    elif r["url"].endswith(("/good1", "/good2")) and r.get("status") == 200:
        good += 1
print(kind if good == 2 else "%s; good pages %d/2" % (kind, good))
PY
)
    local over verdict
    over=$(above "$RSS_KIB" "$IDLE_KIB")
    if ((allowed > 0)); then
        verdict=$(awk -v o="$over" -v t="$TARGET_MIB" -v a="$allowed" 'BEGIN { print (o <= a + t ? "limit" : "OVER") }')
        held=$((held + 1))
        [[ $verdict == limit ]] || failures=$((failures + 1))
    else
        verdict=$(awk -v o="$over" -v t="$TARGET_MIB" 'BEGIN { print (o <= t ? "ok" : "OVER") }')
        rows=$((rows + 1))
        [[ $verdict == ok ]] || failures=$((failures + 1))
    fi
    [[ $STATUS == timeout ]] && kind="$kind (killed at ${TIMEOUT} s)"
    printf '| %-34s | %13s | %-16s | %-30s | %6s | %8s | %9s | %-7s |\n' "$label" "$BYTES" "$ENDS" "$kind" \
        "$WALL" "$(mib "$RSS_KIB")" "$over" "$verdict"
}
for name in "${FLOODS[@]}"; do
    if [[ $BODY_FLOODS == *" $name "* ]]; then
        row "$name" "$name" 0
        row "$name --max-body-size 2GiB" "$name" 2048 --max-body-size 2GiB
    else
        row "$name" "$name" 0
    fi
done
echo
echo "verdict: $((rows - failures)) of $rows floods under the default limits within $TARGET_MIB MiB above the idle" \
    "crawl, $failures over; $held run with a raised --max-body-size hold a body up to that limit (verdict" \
    "'limit': within it plus $TARGET_MIB MiB), as configured"

# ---- wget and wget2: the flood URL alone, the body to /dev/null (nothing written to disk) --------------------
for peer in $PEERS; do
    if ! command -v "$peer" >/dev/null; then
        echo
        echo "$peer: not installed, skipped"
        continue
    fi
    case $peer in
    wget) peer_flags=(-q --tries=1 -O /dev/null) ;;
    wget2) peer_flags=(-q --tries=1 --robots=off -O /dev/null) ;;
    *) continue ;;
    esac
    echo
    LIMIT=$PEER_TIMEOUT
    measure idle "$peer" "${peer_flags[@]}" "$ORIGIN/good1"
    peer_idle=$RSS_KIB
    echo "$peer ($("$peer" --version 2>/dev/null | head -1)), one good page: peak RSS $(mib "$peer_idle") MiB"
    echo
    printf '| %-34s | %13s | %-16s | %-10s | %6s | %8s | %9s |\n' flood "bytes sent" "ended by" exit "wall s" \
        "RSS MiB" "above MiB"
    printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..15})" \
        "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..8})" \
        "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..11})"
    for name in "${FLOODS[@]}"; do
        measure "$name" "$peer" "${peer_flags[@]}" "$ORIGIN/flood/$name"
        printf '| %-34s | %13s | %-16s | %-10s | %6s | %8s | %9s |\n' "$name" "$BYTES" "$ENDS" "$STATUS" "$WALL" \
            "$(mib "$RSS_KIB")" "$(above "$RSS_KIB" "$peer_idle")"
    done
    LIMIT=
done
