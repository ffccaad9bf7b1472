#!/usr/bin/env bash
# scripts/container.sh takes the base image's apt sources from the machine's own apt configuration (both
# formats), says so clearly when there is none, and no file of the repository names a package mirror's host.
# Usage: container_sources_test.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "container_sources_test: $*" >&2; exit 1; }

mkdir -p "$work/apt/sources.list.d" "$work/empty"
cat >"$work/apt/sources.list" <<'LIST'
# a comment
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://one.test/debian bookworm main contrib
deb-src http://one.test/debian bookworm main
deb http://one.test/debian bullseye main
deb http://two.test/debian-security bookworm-security main
LIST
cat >"$work/apt/sources.list.d/more.sources" <<'SOURCES'
Types: deb
URIs: http://off.test/debian
Suites: bookworm-updates
Components: main
Enabled: no

Types: deb deb-src
# a comment inside a stanza
URIs: http://three.test/debian
Suites: bookworm bookworm-updates
Components: main non-free
SOURCES
echo 'deb http://ignored.test/debian bookworm main' >"$work/apt/sources.list.d/x.list.disabled"

got=$(APT_ETC="$work/apt" bash "$src/scripts/container.sh" sources)
expected='http://one.test/debian bookworm main contrib
http://two.test/debian-security bookworm-security main
http://three.test/debian bookworm main non-free
http://three.test/debian bookworm-updates main non-free'
[ "$got" = "$expected" ] || fail "sources: expected
$expected
got
$got"
[ -z "$(APT_ETC="$work/empty" bash "$src/scripts/container.sh" sources)" ] || fail "sources from nothing"

# No file names a Debian or Ubuntu mirror (or npm registry) host: the machine's configuration decides.
hits=$(grep -rInE '(deb|ftp|security|snapshot|archive)\.(debian|ubuntu)\.(org|com)|registry\.npmjs\.org' \
  "$src/scripts" "$src/Dockerfile" "$src/deploy" "$src/docs" "$src/README.md" "$src/test" "$src/cmake" \
  "$src/CMakeLists.txt" "$src/bench" 2>/dev/null | grep -v 'container_sources_test.sh' | grep -v node_modules || true)
[ -z "$hits" ] || fail "a package mirror's host name in the tree:
$hits"
echo "container_sources_test: ok"
