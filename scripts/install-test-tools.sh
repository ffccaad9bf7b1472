#!/usr/bin/env bash
# Installs the test-only tools that do not come from Debian packages: warcio.js (test/warc, pinned by its
# package-lock.json), the independent WARC reader test/outputs/warc_test.cpp checks archives with.
# Idempotent: does nothing when the locked packages are already installed. Node.js and npm come from Debian when
# the machine has none; if that fails too it says so and exits 0: the tests that need them skip with a message.
# With --browser (or its older name --replay), also what the browser checks (ctest label browser) need:
# Debian's chromium and, in test/browser (pinned by its package-lock.json), puppeteer-core and replayweb.page,
# for scripts/dashboard-check.sh (the live dashboard) and scripts/replay-wacz.sh (a WACZ replayed); a failure
# there is an error (exit 1).
set -euo pipefail
browser=0
for argument in "$@"; do
  case "$argument" in
    --browser | --replay) browser=1 ;;
    *)
      echo "install-test-tools: unknown argument '$argument' (--browser)" >&2
      exit 2
      ;;
  esac
done
cd "$(dirname "$0")/../test/warc"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-test-tools: installing nodejs and npm (Debian) for the warcio.js WARC check" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  missing=()
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    true
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-test-tools: node/npm not available; the warcio.js WARC check will be skipped" >&2
  exit 0
fi
# npm ci writes node_modules/.package-lock.json; newer than the lock file means the install is current.
if [ ! -f node_modules/warcio/package.json ] || [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
  echo "install-test-tools: npm ci in test/warc" >&2
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
if [ "$browser" -eq 0 ]; then
  exit 0
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "install-test-tools: installing chromium (Debian) for the WACZ replay and the dashboard check" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
cd ../browser
if [ ! -f node_modules/puppeteer-core/package.json ] || [ ! -f node_modules/replaywebpage/sw.js ] ||
  [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
  echo "install-test-tools: npm ci in test/browser" >&2
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
