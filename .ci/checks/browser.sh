#!/usr/bin/env bash
# Debian's chromium for test/status-page.browser.test.ts (driven by npm playwright-core with
# executablePath /usr/bin/chromium; `npx playwright install` cannot download browsers here).
# Run it BEFORE `npm test`: under CI (env CI set) that test fails when the browser is missing.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "browser.sh: chromium is missing and we are not root (no sudo)" >&2; exit 1; }
    SUDO="sudo"
  fi
  echo "installing Debian's chromium (apt-get)…"
  start=$(date +%s)
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
  echo "chromium installed in $(( $(date +%s) - start )) s"
fi

[ -x /usr/bin/chromium ] || { echo "browser.sh: /usr/bin/chromium still missing after install" >&2; exit 1; }
# Debian's launcher script prints a harmless shell warning on some hosts; keep only the version.
version=$(/usr/bin/chromium --version 2>/dev/null)
[ -n "$version" ] || { echo "browser.sh: /usr/bin/chromium --version printed nothing" >&2; exit 1; }
echo "$version"
