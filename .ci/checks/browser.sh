#!/usr/bin/env bash
# Debian's chromium for the status-page test (playwright-core drives it; no browser download).
set -euo pipefail
if ! command -v chromium >/dev/null; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version
