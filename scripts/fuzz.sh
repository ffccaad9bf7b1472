#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz) with clang in build-fuzz/ and runs each for SECONDS (default 60),
# starting from its seed corpus in test/fuzz/corpus/<name>/. New inputs go to build-fuzz/corpus/<name>/,
# crashes to build-fuzz/artifacts/. Prints one "fuzz: <target> <executions> executions in <s> s" line per target.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 300 fuzz_url
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true

scripts/install-deps.sh
# The fuzzing toolchain is not needed to build or test asiocrawl, so it is installed here only.
if ! command -v clang++-14 >/dev/null 2>&1 ||
   ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "fuzz: installing clang-14 and libclang-rt-14-dev" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev >/dev/null
fi

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz "${generator[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON -DASIOCRAWL_FUZZ=ON \
    -DASIOCRAWL_BUILD_TESTS=OFF -DASIOCRAWL_BUILD_DEMO=OFF >/dev/null
else
  cmake -S . -B build-fuzz >/dev/null # picks up targets whose headers appeared since
fi
cmake --build build-fuzz -j "${ASIOCRAWL_JOBS:-2}" --target asiocrawl_fuzzers

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for exe in build-fuzz/test/fuzz/fuzz_*; do
    [ -x "$exe" ] && targets+=("$(basename "$exe")")
  done
fi

mkdir -p build-fuzz/artifacts
# One fuzzer per core (ASIOCRAWL_JOBS, default 2): each is single-threaded and CPU-bound, so two at a time halve
# the wall time on two cores and give each target the same seconds.
run_target() {
  local target="$1" name="${1#fuzz_}"
  local seeds="test/fuzz/corpus/$name" work="build-fuzz/corpus/$name" log="build-fuzz/$1.log"
  mkdir -p "$work" "$seeds"
  # -timeout: one input taking longer is a hang worth a report; -rss_limit_mb: memory blow-ups too.
  if build-fuzz/test/fuzz/"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$target-" \
      "$work" "$seeds" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $target ${runs:-?} executions in $seconds s"
  else
    echo "fuzz: $target FAILED (log: $log)" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}
parallel="${ASIOCRAWL_JOBS:-2}"
pids=()
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_target "$target" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
exit $failed
