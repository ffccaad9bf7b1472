#!/usr/bin/env bash
# Builds the asiocrawl container image without a Docker engine (buildah, chroot isolation) and proves it works:
# the image's own entrypoint crawls the demo site, served on loopback by the demo server from the build stage.
#
# Usage: scripts/container.sh [build|run|all|sources]     (default: all)
#   build    make the debian:bookworm base with debootstrap if it is missing, then build the image
#   run      crawl the demo site with the built image; records land in build/container-data/
#   sources  print the apt sources the base image would get (this machine's bookworm sources)
# Environment: IMAGE (default localhost/asiocrawl:latest), DEBIAN_MIRROR (default: the bookworm source of this
# machine's apt configuration; no mirror is named here: a machine without one is told so).
# Needs root (or rootless buildah set up) and the packages buildah and debootstrap; installs them when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

image=${IMAGE:-localhost/asiocrawl:latest}
build_image=${image%:*}-build:${image##*:}
base=docker.io/library/debian:bookworm
apt_etc=${APT_ETC:-/etc/apt} # another directory only to check the parsing
action=${1:-all}

log() { echo "container: $*" >&2; }

need_tools() {
  local missing=()
  command -v buildah >/dev/null 2>&1 || missing+=(buildah)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Every enabled "deb" source apt reads on this machine, one "URI SUITE COMPONENT..." line each, from the one-line
# format (sources.list, sources.list.d/*.list) and the deb822 format (sources.list.d/*.sources).
apt_sources() {
  local f
  for f in "$apt_etc"/sources.list "$apt_etc"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" {
           i = 2
           if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }   # skip [options]
           if (i + 1 > NF) next
           line = $i " " $(i + 1)
           for (j = i + 2; j <= NF; j++) line = line " " $j
           print line
         }' "$f"
  done
  for f in "$apt_etc"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush() {
           if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "" && suites != "") {
             n = split(uris, u, " "); m = split(suites, s, " ")
             for (a = 1; a <= n; a++) for (b = 1; b <= m; b++) print u[a] " " s[b] " " components
           }
           types = uris = suites = components = ""; enabled = "yes"
         }
         BEGIN { enabled = "yes" }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         {
           key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, ""); value = $0
           if (key == "types") types = value
           else if (key == "uris") uris = value
           else if (key == "suites") suites = value
           else if (key == "components") components = value
           else if (key == "enabled") enabled = tolower(value)
         }
         END { flush() }' "$f"
  done
}

# The machine's sources for bookworm and its updates and security suites: the base image gets exactly these,
# so it reaches the same mirrors (or proxy, or snapshot) as the machine's own apt.
bookworm_sources() {
  apt_sources | awk '$2 ~ /^bookworm(-updates|-security|\/updates)?$/ { if (NF == 2) $0 = $0 " main"; print }' |
    awk '!seen[$0]++'
}

# Docker Hub's debian:bookworm-slim is bookworm with docs, man pages and locales excluded; the local stand-ins
# for both are made from one debootstrap, the slim one by deleting those files before it becomes a layer.
make_base() {
  local have_base=no have_slim=no mirror rootfs
  buildah inspect --type image "$base" >/dev/null 2>&1 && have_base=yes
  buildah inspect --type image "$base-slim" >/dev/null 2>&1 && have_slim=yes
  [ $have_base = no ] || [ $have_slim = no ] || return 0
  local sources
  sources=$(bookworm_sources)
  mirror=${DEBIAN_MIRROR:-$(awk '$2 == "bookworm" { print $1; exit }' <<<"$sources")}
  if [ -z "$mirror" ]; then
    log "no apt source for bookworm in $apt_etc/sources.list or $apt_etc/sources.list.d/ (*.list, *.sources):"
    log "configure one for apt on this machine, or set DEBIAN_MIRROR to a Debian mirror's URL"
    exit 1
  fi
  rootfs=$(mktemp -d)
  log "bootstrapping the missing local base images ($base: $have_base, $base-slim: $have_slim) from $mirror"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  # The machine's own bookworm sources (main suite, updates, security), so apt-get in the Dockerfile reaches
  # what apt reaches here.
  if [ -n "$sources" ]; then
    awk '{ line = "deb " $1; for (i = 2; i <= NF; i++) line = line " " $i; print line }' <<<"$sources" \
      >"$rootfs/etc/apt/sources.list"
  else
    printf 'deb %s bookworm main\n' "$mirror" >"$rootfs/etc/apt/sources.list"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  [ $have_base = yes ] || commit_rootfs "$rootfs" "$base"
  printf '%s\n' "path-exclude /usr/share/doc/*" "path-include /usr/share/doc/*/copyright" \
    "path-exclude /usr/share/man/*" "path-exclude /usr/share/info/*" "path-exclude /usr/share/locale/*" \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
  [ $have_slim = yes ] || commit_rootfs "$rootfs" "$base-slim"
  rm -rf "$rootfs"
}

commit_rootfs() {
  local rootfs=$1 name=$2 container
  tar -C "$rootfs" -c . >"$rootfs.tar"
  container=$(buildah from scratch)
  buildah add "$container" "$rootfs.tar" / >/dev/null
  buildah config --cmd /bin/bash "$container"
  buildah commit -q "$container" "$name" >/dev/null
  buildah rm "$container" >/dev/null
  rm -f "$rootfs.tar"
}

build_images() {
  make_base
  # The build stage is tagged too: the demo run takes the demo server from it. --layers makes the second
  # invocation reuse every step of the first.
  local common=(--pull=never --isolation chroot --layers --build-arg "BUILD_JOBS=${BUILD_JOBS:-1}" -f Dockerfile)
  log "building $build_image (build stage: install deps, build, run the tests)"
  buildah bud "${common[@]}" --target build -t "$build_image" .
  log "building $image (runtime stage)"
  buildah bud "${common[@]}" -t "$image" .
  buildah images "$image"
}

containers=()
server_pids=()
entrypoint=()
cleanup() {
  for pid in "${server_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
}

# A working container of the image for `buildah run`. buildah 1.28 shadows a -v mount on a path the image
# declares as VOLUME with an anonymous volume of its own, so the declaration is dropped from the container
# (docker and podman bind the -v mount as expected).
new_run_container() {
  local container
  container=$(buildah from --pull=never "$image")
  buildah config --volume /data- "$container"
  echo "$container"
}

# Starts the demo server from the build stage with PAGES pages and sets `root` to its URL. Chroot isolation
# shares the host's network, so it listens on the host's loopback.
start_demo_server() {
  local pages=$1 out server
  out=$(mktemp)
  server=$(buildah from --pull=never "$build_image")
  containers+=("$server")
  # Its stderr goes to a log: buildah reports the kill at cleanup as an error.
  buildah run --isolation chroot "$server" -- /build/demo/asiocrawl-demo-server --port 0 --pages "$pages" \
    >"$out" 2>>build/container-demo-server.log &
  server_pids+=($!)
  for _ in $(seq 1 300); do
    [ -s "$out" ] && break
    sleep 0.1
  done
  root=$(head -n 1 "$out")
  rm -f "$out"
  [ -n "$root" ] || { log "the demo server did not start"; exit 1; }
}

# The crawl runs the image as `docker run` would: its entrypoint, its user, /data mounted from the host. The
# container's default config refuses private addresses, so these loopback runs pass none (ASIOCRAWL_CONFIG=).
run_demo() {
  trap cleanup EXIT
  local data=$PWD/build/container-data crawl root
  mkdir -p "$data"
  rm -f "$data"/records.jsonl
  chown 10001:10001 "$data" # the image's asiocrawl user
  read -r -a entrypoint <<<"$(buildah inspect --type image --format '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}' "$image")"

  start_demo_server 200
  crawl=$(new_run_container)
  containers+=("$crawl")
  log "crawling $root like: docker run -v $data:/data -e ASIOCRAWL_CONFIG= $image -o /data/records.jsonl $root"
  buildah run --isolation chroot --env ASIOCRAWL_CONFIG= -v "$data:/data" "$crawl" -- \
    "${entrypoint[@]}" -o /data/records.jsonl "$root"
  log "$(wc -l <"$data"/records.jsonl) records in $data/records.jsonl, owned by $(stat -c %u:%g "$data"/records.jsonl)"

  start_demo_server 5000
  big_root=$root
  sigterm_demo
}

# SIGTERM, as `docker stop` or a Kubernetes deadline sends it: tini (PID 1 in the image) forwards it and the
# crawler stops gracefully, prints its report and exits 143. A large site keeps the crawl busy meanwhile.
sigterm_demo() {
  local data=$PWD/build/container-data crawl out run_pid tini_pid="" status
  out=$(mktemp)
  crawl=$(new_run_container)
  containers+=("$crawl")
  rm -f "$data"/interrupted.jsonl
  buildah run --isolation chroot --env ASIOCRAWL_CONFIG= -v "$data:/data" "$crawl" -- \
    "${entrypoint[@]}" --max-tasks 2 -o /data/interrupted.jsonl "$big_root" >"$out" 2>&1 &
  run_pid=$!
  # Wait (bounded) until the crawl is under way, then find tini among the processes this run started.
  for _ in $(seq 1 300); do
    [ -s "$data"/interrupted.jsonl ] && [ "$(wc -l <"$data"/interrupted.jsonl)" -ge 20 ] && break
    sleep 0.1
  done
  local pids=("$run_pid") pid
  while [ ${#pids[@]} -gt 0 ] && [ -z "$tini_pid" ]; do
    pid=${pids[0]}
    pids=("${pids[@]:1}")
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = tini ]; then
      tini_pid=$pid
    else
      pids+=($(ps -o pid= --ppid "$pid"))
    fi
  done
  [ -n "$tini_pid" ] || { log "no tini process found under buildah run $run_pid"; kill "$run_pid"; exit 1; }
  log "sending SIGTERM to the container's init (tini, host pid $tini_pid) after $(wc -l <"$data"/interrupted.jsonl) records"
  kill -TERM "$tini_pid"
  status=0
  wait "$run_pid" || status=$?
  grep -E 'interrupted|Todo|Done' "$out" >&2 || true
  rm -f "$out"
  log "the crawl exited with status $status and wrote $(wc -l <"$data"/interrupted.jsonl) records"
  [ "$status" -eq 143 ] || { log "expected exit status 143 (graceful stop on SIGTERM)"; exit 1; }
}

case $action in
build) need_tools && build_images ;;
run) run_demo && log "demo crawl and SIGTERM check passed" ;;
all) need_tools && build_images && run_demo && log "image built, demo crawl and SIGTERM check passed" ;;
sources) bookworm_sources ;;
*)
  echo "usage: $0 [build|run|all|sources]" >&2
  exit 2
  ;;
esac
