#!/usr/bin/env bash
# Installs what is missing, builds, and runs the test suite (two tests at a time). This is the CI command.
# Usage: scripts/test.sh [STAGE...]   stages, in the order given (default: all):
#   normal  RelWithDebInfo build in build/, every test (the developer's full plain run; not part of all)
#   plain   RelWithDebInfo build in build/ of what only an unsanitized binary can check: hostile_cli_test
#           (peak RSS bounds, running out of descriptors; both skip under sanitizers). The format check,
#           which needs no build, runs in asan.
#   asan    AddressSanitizer + UndefinedBehaviorSanitizer, -O1, build-asan/, every test and the format check
#   tsan    ThreadSanitizer, -O1, build-tsan/, the tests whose process runs more than one thread (parse pool,
#           output writer threads, seed reader, the CLI)
#   fuzz    each libFuzzer target for FUZZ_SECONDS (default 10) from its seed corpus (scripts/fuzz.sh)
#   all     plain asan tsan fuzz: what CI runs (the same as no argument). Every test runs under ASan+UBSan;
#           docs/TESTING.md has the measured cost of each stage and why the suite is not run a second time
#           unsanitized.
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

# Sanitized builds: -O1 keeps them fast enough while stacks stay readable. -g1 (line tables and function names,
# no variable locations) is all a sanitizer report symbolizes, and takes about a quarter off each sanitized
# compile (docs/TESTING.md). No CLI-only options differ, so one configure per directory is enough and later
# runs are incremental.
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
configure() {
  local dir="$1"
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
      -DCMAKE_CXX_FLAGS_DEBUG=-g1 "$@" \
      >/dev/null
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
      # Only executables whose process runs a second thread: TSan reports races between threads, and a
      # single-threaded test (work_queue_test, fetcher_test, crawler_test) cannot have one; they run under
      # ASan+UBSan. cli_test runs the TSan-built CLI (parse pool, writer threads) as a child process;
      # durable_crawl_test hands each commit to the RocksDB storage thread and takes its answer back.
      tsan_tests=(polite_crawl_test embed_test warc_test save_dir_test metrics_test cli_test background_writer_test
                  output_set_test requisites_crawl_test crawl_options_test durable_crawl_test)
      cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
      label="^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
      TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --test-dir build-tsan --output-on-failure -j 2 -L "$label"
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
