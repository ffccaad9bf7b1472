#!/usr/bin/env bash
# Configures and builds asiocrawl in build/ (RelWithDebInfo). Incremental after the first run.
# A new build/ is a unity build (CMAKE_UNITY_BUILD=ON: a layer's sources compile as one translation unit), which
# takes more than half off a cold build; for edit-and-rebuild loops, where one file's change should rebuild one
# file, turn it off once: cmake -B build -DCMAKE_UNITY_BUILD=OFF (docs/TESTING.md).
# Usage: scripts/build.sh [extra cmake -D options] [--target TARGET...]
#   With no --target it builds everything (library, CLI, demo server, examples, tests); with --target only those
#   targets and what they need, e.g. scripts/build.sh --target asiocrawl_cli asiocrawl-demo-server (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
options=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      shift
      while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
        targets+=("$1")
        shift
      done
      ;;
    *)
      options+=("$1")
      shift
      ;;
  esac
done
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ ! -f build/CMakeCache.txt ]; then
  source scripts/ci-settings.sh
  cmake -S . -B build "${generator[@]}" "${launcher[@]}" "${plain_options[@]}" "${options[@]}" >/dev/null
elif [ ${#options[@]} -gt 0 ]; then
  cmake -S . -B build "${options[@]}" >/dev/null
fi
# Two jobs: a Beast coroutine translation unit needs ~1.5 GB to compile.
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build build -j "${ASIOCRAWL_JOBS:-2}" --target "${targets[@]}"
else
  cmake --build build -j "${ASIOCRAWL_JOBS:-2}"
fi
