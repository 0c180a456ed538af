#!/usr/bin/env bash
# Documentation: the repository stands alone and its generated docs are current.
#   - every link and path in every file stays inside the repository and exists (scripts/check-links.mjs)
#   - docs/configuration.md is what the config schema generates (needs the build: npm test builds)
#   - every alert links its section of docs/runbook.md under one absolute base URL
#   - README.md stays a front door: under 10 KB, with the commands CI runs
set -euo pipefail
cd "$(dirname "$0")/../.."

node scripts/check-links.mjs
node scripts/config-reference.mjs
node scripts/runbook-links.mjs

size=$(wc -c < README.md)
if [ "$size" -ge 10240 ]; then
  echo "FAIL: README.md is $size bytes; keep it under 10 KB (details belong in docs/)"
  exit 1
fi
for cmd in 'npm ci && npm start' 'npm test'; do
  grep -qF "$cmd" README.md || { echo "FAIL: README.md does not show '$cmd'"; exit 1; }
done
echo "README.md: $size bytes, shows npm ci && npm start and npm test"
