#!/bin/sh
# Prints the Debian packages that own the shared libraries a binary loads, one a line, except those every
# Debian image has (libc6, libgcc-s1, libstdc++6 come with apt). Fails when a library has no owning package,
# so a runtime image can never miss one silently. Used by the Dockerfile's build stage.
# Usage: deploy/runtime-packages.sh BINARY
set -eu

owner() {
  # With merged /usr, dpkg knows a file under the path its package shipped (/lib/... or /usr/lib/...), which
  # may differ from the path ldd prints and from its realpath.
  for candidate in "$1" "$(realpath "$1")"; do
    for path in "$candidate" "/usr${candidate#/usr}" "${candidate#/usr}"; do
      if found=$(dpkg -S "$path" 2>/dev/null); then
        echo "$found" | head -n 1 | cut -d: -f1
        return 0
      fi
    done
  done
  echo "runtime-packages: no Debian package owns $1" >&2
  return 1
}

packages=""
for lib in $(ldd "$1" | awk '/=> \// { print $3 }'); do
  packages="$packages $(owner "$lib")"
done
for p in $packages; do
  case $p in
  libc6 | libgcc-s1 | libstdc++6) ;;
  *) echo "$p" ;;
  esac
done | sort -u
