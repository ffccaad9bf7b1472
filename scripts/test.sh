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
begin() {
  stage_started=$SECONDS
  echo "== test.sh: stage $1" >&2
}
end() { echo "== test.sh: stage $1 took $((SECONDS - stage_started)) s" >&2; }

# Sanitized builds: -O0, because the sanitizers, not the optimizer, are what these builds are for, and -O1 costs
# half again as much compile time (the tests wait on sockets and timers more than they compute). -g1 (line
# tables and function names, no variable locations) is all a sanitizer report symbolizes, and takes about a
# quarter off each sanitized compile (docs/TESTING.md). No CLI-only options differ, so one configure per
# directory is enough and later runs are incremental.
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
configure() {
  local dir="$1"
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
      -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
  fi
}

scripts/install-deps.sh
scripts/install-test-tools.sh
for stage in "${stages[@]}"; do
  begin "$stage"
  case "$stage" in
    normal)
      scripts/build.sh
      ctest --test-dir build --output-on-failure -j 2
      ;;
    plain)
      scripts/build.sh --target hostile_cli_test
      ctest --test-dir build --output-on-failure -j 2 -L '^hostile_cli_test$'
      ;;
    asan)
      configure build-asan -DASIOCRAWL_SANITIZE=address
      cmake --build build-asan -j "$jobs"
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan --output-on-failure -j 2
      ;;
    tsan)
      configure build-tsan -DASIOCRAWL_SANITIZE=thread
      # Only the layers whose processes run a second thread: TSan reports races between threads, and the
      # sans-io layers' tests (url, policy, html, state...) cannot have one; they run under ASan+UBSan. engine:
      # the parse pool, the seed reader; outputs: the writer threads; store: the RocksDB storage thread; cli: the
      # TSan-built CLI as a child process. The CLI tests that kill, resume and share crawls between several CLI
      # processes (resume_kill, shared_crawl*, state_disk) test processes, not threads, and stay in asan.
      tsan_tests=(engine_tests outputs_tests store_tests cli_tests)
      cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
      label="^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
      TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --test-dir build-tsan --output-on-failure -j 2 -L "$label" \
        -E '^(resume_kill|shared_crawl|shared_crawl_start|shared_crawl_tls|state_disk)\.'
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
