#!/usr/bin/env bash
# Measures where a CI stage's time goes, in CPU seconds (wall time is noise on a shared machine; CPU is not):
# a cold build (no ccache) of the stage's configuration in a fresh directory, every compile and link step timed
# by /usr/bin/time, then the stage's tests under /usr/bin/time. docs/TESTING.md holds the figures it printed.
# Usage: scripts/ci-profile.sh STAGE [TARGET...]   STAGE: normal, plain, demo, asan, tsan, fuzz
#   The build directory is build-profile-STAGE/ (deleted first); its .cpu_log has one line per step:
#   "user_s sys_s wall_s max_rss_kb compile|link output". TARGET... builds only those targets (default: the stage's
#   own, as scripts/test.sh builds them) and skips the tests. Extra cmake options: PROFILE_CMAKE_OPTIONS.
#   Jobs: ASIOCRAWL_JOBS (default 2).
set -euo pipefail

# Launcher mode: CMake runs every compile and link step through this script (CMAKE_CXX_*_LAUNCHER).
if [ "${1:-}" = "--launch" ]; then
  shift
  out="" prev="" kind=link
  for a in "$@"; do
    if [ "$prev" = "-o" ]; then out="$a"; fi
    if [ "$a" = "-c" ]; then kind=compile; fi
    prev="$a"
  done
  times=$(mktemp)
  rc=0
  /usr/bin/time -f "%U %S %e %M" -o "$times" "$@" || rc=$?
  echo "$(tail -n 1 "$times") $kind $out" >>"$PWD/.cpu_log"
  rm -f "$times"
  exit $rc
fi

cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/time ]; then
  echo "ci-profile: needs /usr/bin/time (Debian package time)" >&2
  exit 2
fi
stage="${1:?usage: scripts/ci-profile.sh STAGE [TARGET...]}"
shift
jobs="${ASIOCRAWL_JOBS:-2}"
dir="build-profile-$stage"
# Configured, selected and run as scripts/test.sh does.
source scripts/ci-settings.sh
ctest_args=()
case "$stage" in
  normal) options=("${plain_options[@]}") targets=() ;;
  plain)
    options=("${plain_options[@]}") targets=(hostile_cli_test)
    ctest_args=(-L '^hostile_cli_test$')
    ;;
  demo) options=("${plain_options[@]}") targets=(asiocrawl_cli asiocrawl-demo-server) ;;
  asan) options=("${sanitized_options[@]}" -DASIOCRAWL_SANITIZE=address) targets=() ;;
  tsan)
    options=("${sanitized_options[@]}" -DASIOCRAWL_SANITIZE=thread) targets=("${tsan_tests[@]}")
    ctest_args=(-L "$tsan_label" -E "$tsan_skipped")
    ;;
  fuzz)
    options=(-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASIOCRAWL_FUZZ=ON
             -DASIOCRAWL_BUILD_TESTS=OFF -DASIOCRAWL_BUILD_DEMO=OFF)
    targets=(asiocrawl_fuzzers)
    ;;
  *)
    echo "ci-profile: unknown stage '$stage' (normal, plain, demo, asan, tsan, fuzz)" >&2
    exit 2
    ;;
esac
run_tests=1
if [ $# -gt 0 ]; then
  targets=("$@")
  run_tests=0
fi
if [ "$stage" = demo ] || [ "$stage" = fuzz ]; then run_tests=0; fi
read -r -a extra <<<"${PROFILE_CMAKE_OPTIONS:-}"

rm -rf "$dir"
export CCACHE_DISABLE=1
self="$PWD/scripts/ci-profile.sh"
launch="$dir/launch.sh"
mkdir -p "$dir"
printf '#!/bin/sh\nexec %q --launch "$@"\n' "$self" >"$launch"
chmod +x "$launch"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/$launch" \
  -DCMAKE_CXX_LINKER_LAUNCHER="$PWD/$launch" "${options[@]}" "${extra[@]}" >"$dir/configure.log"
build=(cmake --build "$dir" -j "$jobs")
if [ ${#targets[@]} -gt 0 ]; then build+=(--target "${targets[@]}"); fi
/usr/bin/time -f "%e %U %S" -o "$dir/.build_time" "${build[@]}" >"$dir/build.log"

summary() {
  awk -v what="$1" '$5 == what { u += $1 + $2; n++ } END { printf "%s: %d steps, %.0f CPU s\n", what, n, u }' \
    "$dir/.cpu_log"
}
read -r wall user sys <"$dir/.build_time"
echo "ci-profile: $stage build: ${wall} s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", u+s}') CPU s" \
  "(compiles, links, test discovery and the rest)"
summary compile
summary link
echo "top 20 compile steps (CPU s, max RSS MB):"
awk '$5 == "compile" { printf "%8.1f %6.0f %s\n", $1 + $2, $4 / 1024, $6 }' "$dir/.cpu_log" | sort -rn | head -n 20
echo "top 10 link steps (CPU s, max RSS MB):"
awk '$5 == "link" { printf "%8.1f %6.0f %s\n", $1 + $2, $4 / 1024, $6 }' "$dir/.cpu_log" | sort -rn | head -n 10

if [ $run_tests = 1 ]; then
  env_vars=()
  if [ "$stage" = asan ]; then
    env_vars=("${asan_env[@]}")
  elif [ "$stage" = tsan ]; then
    env_vars=("${tsan_env[@]}")
  fi
  rc=0
  env "${env_vars[@]}" /usr/bin/time -f "%e %U %S" -o "$dir/.test_time" \
    ctest --test-dir "$dir" --output-on-failure -j 2 "${ctest_args[@]}" >"$dir/test.log" 2>&1 || rc=$?
  read -r wall user sys <"$dir/.test_time"
  echo "ci-profile: $stage tests: ${wall} s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.0f", u+s}')" \
    "CPU s; $(grep -E 'tests passed|tests failed' "$dir/test.log" || echo "no summary, see $dir/test.log")"
  exit $rc
fi
