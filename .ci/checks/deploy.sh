#!/usr/bin/env bash
# Deployment artefacts: systemd units parse and are hardened; the Dockerfile lints.
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v systemd-analyze >/dev/null || { apt-get update -qq && apt-get install -y -qq systemd >/dev/null; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A template unit is checked as an instance.
cp systemd/dms-keeper.service "$tmp/dms-keeper.service"
cp systemd/dms-keeper@.service "$tmp/dms-keeper@0.service"

for unit in "$tmp/dms-keeper.service" "$tmp/dms-keeper@0.service"; do
  # verify exits 0 even on parse errors: any output is a failure (OPS.md).
  out=$(systemd-analyze verify "$unit" 2>&1 || true)
  if [ -n "$out" ]; then
    echo "systemd-analyze verify $(basename "$unit"):"
    echo "$out"
    exit 1
  fi
  score=$(systemd-analyze security --offline=true --threshold=20 "$unit" 2>&1 | tail -n 1)
  systemd-analyze security --offline=true --threshold=20 "$unit" >/dev/null
  echo "systemd $(basename "$unit"): verify clean; $score"
done

npx --no-install dockerfile-utils lint Dockerfile
echo "Dockerfile: dockerfile-utils lint clean"
