#!/usr/bin/env bash
# Installs the Debian bookworm packages asiocrawl needs to build and test.
# Idempotent: when every package is already installed it returns without touching apt.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  libboost1.81-dev libboost-url1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev
  libgumbo-dev libyaml-cpp-dev libssl-dev zlib1g-dev libpsl-dev libexpat1-dev librocksdb-dev libxxhash-dev
  libc-ares-dev libidn2-dev libhiredis-dev libzip-dev libbrotli-dev libzstd-dev libnghttp2-dev
  redis-server nginx nghttp2-server
  libgtest-dev libgmock-dev
)

# One dpkg-query for the whole list (the no-op path every script starts with); a package it does not know is
# missing too.
declare -A installed=()
while read -r name status; do
  if [ "$status" = "install ok installed" ]; then installed[${name%%:*}]=1; fi
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  if [ -z "${installed[$p]:-}" ]; then missing+=("$p"); fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# --no-install-recommends: libboost1.81-dev conflicts with Debian's default libboost1.74-dev.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
