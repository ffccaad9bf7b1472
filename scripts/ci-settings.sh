# How CI configures, selects and runs its builds: sourced by scripts/test.sh (which runs them) and
# scripts/ci-profile.sh (which measures them the same way), so that the two cannot drift apart.

# Plain build directories (build/ from scripts/build.sh): unity builds, a layer's sources one translation unit
# (docs/TESTING.md: more than half off a cold build); optimized as RelWithDebInfo (-O2, asserts off) but without
# the debug information, which costs a quarter of each compile here (13.4 s against 9.8 s for worker_pool.cpp)
# and which neither the demo crawl nor the plain CI stage reads. For a profile with line numbers, configure a
# build directory of your own with -DCMAKE_BUILD_TYPE=RelWithDebInfo.
plain_options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON)

# Sanitized builds: -O0, because the sanitizers, not the optimizer, are what these builds are for, and -O1 costs
# half again as much compile time (the tests wait on sockets and timers more than they compute). -g1 (line
# tables and function names, no variable locations) is all a sanitizer report symbolizes, and takes about a
# quarter off each sanitized compile (docs/TESTING.md).
# The ASan build leaves out UBSan's alignment, null and pointer-overflow checks: about half of a sanitized
# compile's CPU in the coroutine code, and covered by ASan and the fuzz stage (docs/TESTING.md has the figures).
sanitized_options=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_UNITY_BUILD=ON
  -DASIOCRAWL_UBSAN_SKIP=alignment,null,pointer-overflow)
asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
# The suppressions drop only races TSan reports inside the uninstrumented librocksdb (the file says why).
tsan_env=("TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/test/support/tsan.supp")

# TSan runs only the layers whose processes run a second thread: TSan reports races between threads, and the
# sans-io layers' tests (url, policy, html, state...) cannot have one; they run under ASan+UBSan. engine: the
# parse pool, the seed reader; outputs: the writer threads; store and control (its crawls keep a state
# directory): the RocksDB storage thread; cli: the TSan-built CLI as a child process. The CLI cases that kill, resume and share crawls between several CLI
# processes (resume_kill, shared_crawl*, state_disk) test processes, not threads, and stay in asan.
tsan_tests=(engine_tests outputs_tests store_tests cli_tests control_tests)
tsan_label="^($(IFS='|'; echo "${tsan_tests[*]}"))\$"
tsan_skipped='^(resume_kill|shared_crawl|shared_crawl_start|shared_crawl_tls|state_disk)\.'
