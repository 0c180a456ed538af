#!/usr/bin/env bash
# Makes a redis-server binary available for the shared-budget tests and prints its path (the last
# line of stdout); CI exports it as REDIS_SERVER before `npm test`.
#   1. redis-server on PATH (Debian's package installed), or REDIS_SERVER already set: use it.
#   2. otherwise Debian's packages, downloaded and unpacked, not installed: redis-tools
#      ships the server binary as redis-check-rdb (the same executable, which acts as the server
#      when run under the name redis-server), with libjemalloc2 and liblzf1 beside it. A wrapper
#      script runs it under that name with LD_LIBRARY_PATH at the unpacked libraries.
# Cached under the ignored artifacts/ directory; REDIS_PKG_DIR overrides the place.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -n "${REDIS_SERVER:-}" ] && [ -x "$REDIS_SERVER" ]; then
  echo "$REDIS_SERVER"
  exit 0
fi
if found=$(command -v redis-server); then
  "$found" --version >&2
  echo "$found"
  exit 0
fi

pkg="${REDIS_PKG_DIR:-artifacts/redis-pkg}"
wrapper="$pkg/redis-server"
if [ ! -x "$wrapper" ]; then
  echo "fetching Debian's redis packages into $pkg" >&2
  dl=$(mktemp -d)
  (cd "$dl" && apt-get update -qq >/dev/null && apt-get download redis-server redis-tools libjemalloc2 liblzf1 >/dev/null)
  mkdir -p "$pkg"
  for deb in "$dl"/*.deb; do dpkg -x "$deb" "$pkg"; done
  rm -rf "$dl"
  root=$(realpath "$pkg")
  libdir=$(dirname "$(find "$root/usr/lib" -name 'libjemalloc.so.2' | head -n 1)")
  ln -sf "$root/usr/bin/redis-check-rdb" "$root/usr/bin/redis-server"
  cat >"$wrapper" <<WRAP
#!/bin/sh
LD_LIBRARY_PATH="$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$root/usr/bin/redis-server" "\$@"
WRAP
  chmod +x "$wrapper"
fi
wrapper=$(realpath "$wrapper")
"$wrapper" --version >&2
echo "$wrapper"
