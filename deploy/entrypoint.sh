#!/bin/sh
# The image's entrypoint: runs the asiocrawl CLI with the container's config file, then the arguments given to
# `docker run` (so a URL alone is a complete command line). ASIOCRAWL_CONFIG names the file; set it empty to
# pass no --config. exec keeps the CLI the direct child of tini, which forwards SIGTERM to it.
set -eu

config=${ASIOCRAWL_CONFIG-}
for arg in "$@"; do
  case $arg in
  --config | --config=* | --help | -h | --version) config= ;;
  esac
done
# Until the CLI reads YAML, the file cannot be passed; the built-in defaults and the arguments then apply. A
# file that does not exist is passed on regardless: the CLI names the problem.
if [ -n "$config" ] && asiocrawl --help 2>/dev/null | grep -q -- '--config'; then
  exec asiocrawl --config "$config" "$@"
fi
exec asiocrawl "$@"
