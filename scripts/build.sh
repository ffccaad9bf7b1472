#!/usr/bin/env bash
# Configures and builds asiocrawl in build/ (RelWithDebInfo). Incremental after the first run.
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
  cmake -S . -B build "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" >/dev/null
elif [ ${#options[@]} -gt 0 ]; then
  cmake -S . -B build "${options[@]}" >/dev/null
fi
# Two jobs: a Beast coroutine translation unit needs ~1.5 GB to compile.
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build build -j "${ASIOCRAWL_JOBS:-2}" --target "${targets[@]}"
else
  cmake --build build -j "${ASIOCRAWL_JOBS:-2}"
fi
