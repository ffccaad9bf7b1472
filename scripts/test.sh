#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite (two tests at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-test-tools.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j 2
