#!/usr/bin/env bash
# Installs what is missing, builds, and runs the test suite (two tests at a time). This is the CI command.
# Usage: scripts/test.sh [STAGE...]   stages, in the order given (default: all):
#   normal  RelWithDebInfo build in build/, every test (the developer's full plain run; not part of all)
#   plain   RelWithDebInfo build in build/ of what only an unsanitized binary can check: hostile_cli_test
#           (peak RSS bounds, running out of descriptors; both skip under sanitizers). The format check,
#           which needs no build, runs in asan.
#   asan    AddressSanitizer + UndefinedBehaviorSanitizer, -O0, build-asan/, every test and the format check
#   tsan    ThreadSanitizer, -O0, build-tsan/, the test executables of the layers whose processes run more than
#           one thread (engine, outputs, store, cli)
#   fuzz    each libFuzzer target for FUZZ_SECONDS (default 10) from its seed corpus (scripts/fuzz.sh)
#   all     plain asan tsan fuzz: what CI runs (the same as no argument). Every test runs under ASan+UBSan;
#           docs/TESTING.md has the measured cost of each stage and why the suite is not run a second time
#           unsanitized.
# Every build directory this script creates is a unity build (CMAKE_UNITY_BUILD): a layer's sources compile as
# one translation unit, which takes more than half off a cold build (docs/TESTING.md). An existing directory keeps
# the settings it was configured with.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=("$@")
if [ ${#stages[@]} -eq 0 ] || [ "${stages[*]}" = "all" ]; then stages=(plain asan tsan fuzz); fi

jobs="${ASIOCRAWL_JOBS:-2}"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

stage_started=0
phase_started=0
phase_cpu=0
# CPU seconds (user + system) of every child this script waited for so far: cutime + cstime of its own
# /proc/PID/stat ($$ is this shell even inside a command substitution).
clock_ticks=$(getconf CLK_TCK)
children_cpu() { awk -v hz="$clock_ticks" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat"; }
# What each phase (a build, a test run) cost: wall time and the CPU its processes used, which says how far a phase
# keeps the two cores busy (docs/TESTING.md).
phase() {
  local now cpu
  now=$SECONDS
  cpu=$(children_cpu)
  if [ -n "${1:-}" ]; then
    echo "== test.sh: $1 took $((now - phase_started)) s wall, $((cpu - phase_cpu)) s CPU" >&2
  fi
  phase_started=$now
  phase_cpu=$cpu
}
begin() {
  stage_started=$SECONDS
  phase
  echo "== test.sh: stage $1" >&2
}
end() {
  phase "$1: tests"
  echo "== test.sh: stage $1 took $((SECONDS - stage_started)) s" >&2
}

# Build options, sanitizer settings and the TSan selection, shared with scripts/ci-profile.sh.
source scripts/ci-settings.sh
# No CLI-only options differ, so one configure per sanitized directory is enough and later runs are incremental.
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
configure() {
  local dir="$1"
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" "${sanitized_options[@]}" "$@" >/dev/null
  fi
}

scripts/install-deps.sh
scripts/install-test-tools.sh --browser
for stage in "${stages[@]}"; do
  begin "$stage"
  case "$stage" in
    normal)
      scripts/build.sh
      ctest --test-dir build --output-on-failure -j 2
      ;;
    plain)
      scripts/build.sh --target hostile_cli_test
      phase "plain: build"
      ctest --test-dir build --output-on-failure -j 2 -L '^hostile_cli_test$'
      ;;
    asan)
      configure build-asan -DASIOCRAWL_SANITIZE=address
      cmake --build build-asan -j "$jobs"
      phase "asan: build"
      env "${asan_env[@]}" ctest --test-dir build-asan --output-on-failure -j 2
      ;;
    tsan)
      configure build-tsan -DASIOCRAWL_SANITIZE=thread
      # The threaded layers only (scripts/ci-settings.sh says which and why).
      cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
      phase "tsan: build"
      env "${tsan_env[@]}" ctest --test-dir build-tsan --output-on-failure -j 2 -L "$tsan_label" -E "$tsan_skipped"
      ;;
    fuzz)
      scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
      ;;
    *)
      echo "test.sh: unknown stage '$stage' (normal, plain, asan, tsan, fuzz, all)" >&2
      exit 2
      ;;
  esac
  end "$stage"
done
echo "== test.sh: ${stages[*]} took $SECONDS s in all" >&2
