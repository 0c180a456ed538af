#!/usr/bin/env bash
# Deployment artefacts: the systemd units (the keeper's, its per-shard template, the heartbeat template) parse (systemd-analyze verify prints nothing) and are
# hardened (systemd-analyze security --offline, exposure <= 2.0); the Dockerfile lints clean
# (dockerfile-utils, a devDependency). No Docker engine here: test/deploy.test.ts runs the image's
# exact ENTRYPOINT/CMD and HEALTHCHECK outside a container instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v systemd-analyze >/dev/null; then
  # CI runs as root on Debian; only the analyzer is needed, systemd does not have to be PID 1.
  echo "systemd-analyze not found: installing Debian's systemd package"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Checked as files named like installed units; the templates as an instance: the shard @0, and the
# heartbeat of a bot unit mm-bot.service. The heartbeat binds to its bot's unit, which must exist for
# verify to resolve BindsTo=: a stand-in bot (checked too, not counted in the summary) sits beside it.
cp systemd/dms-keeper.service "$tmp/dms-keeper.service"
cp systemd/dms-keeper@.service "$tmp/dms-keeper@0.service"
cp systemd/dms-keeper-heartbeat@.service "$tmp/dms-keeper-heartbeat@mm-bot.service"
printf '[Unit]\nDescription=a bot (stand-in)\n\n[Service]\nExecStart=/bin/sleep infinity\n' >"$tmp/mm-bot.service"

# `verify` checks that the ExecStart= binary exists on this host. The units name
# /opt/dms-keeper/bin/node, the link the install steps make to a Node.js >= 20.19 (never a
# distribution's nodejs by default: Debian 12's is 18). This machine is not an install, so the copies
# verified here name the node that runs CI instead. Nothing else changes.
node_bin=$(command -v node)
sed -i "s#^ExecStart=/opt/dms-keeper/bin/node #ExecStart=$node_bin #" "$tmp"/dms-keeper*.service
for unit in "$tmp"/dms-keeper*.service; do
  grep -q "^ExecStart=$node_bin " "$unit" || { echo "FAIL: $(basename "$unit"): ExecStart= does not start with /opt/dms-keeper/bin/node"; exit 1; }
done

status=0
summary=()
for unit in "$tmp/dms-keeper.service" "$tmp/dms-keeper@0.service" "$tmp/dms-keeper-heartbeat@mm-bot.service"; do
  name=$(basename "$unit")
  # verify exits 0 even on some parse errors: any output at all is a failure.
  out=$(systemd-analyze verify "$unit" 2>&1 || true)
  if [ -n "$out" ]; then
    echo "FAIL systemd-analyze verify $name:"
    echo "$out"
    status=1
  fi
  # exits non-zero when the exposure is above 2.0; without --offline it needs systemd as PID 1.
  if sec=$(systemd-analyze security --offline=true --threshold=20 "$unit" 2>&1); then
    ok=yes
  else
    ok=no
    status=1
  fi
  score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' | tail -n 1)
  if [ "$ok" = no ]; then
    echo "FAIL systemd-analyze security $name (exposure ${score:-?} > 2.0):"
    printf '%s\n' "$sec" | grep '✗' || printf '%s\n' "$sec" | tail -n 5
  fi
  summary+=("systemd $name: verify $([ -z "$out" ] && echo clean || echo FAILED), exposure ${score:-?} (threshold 2.0)")
done

# dockerfile-utils exits 1 on errors and prints warnings with exit 0: show them, fail on errors.
if lint=$(npx --no-install dockerfile-utils lint Dockerfile 2>&1); then lint_ok=yes; else lint_ok=no; fi
lint=$(printf '%s\n' "$lint" | grep -v '^npm warn' || true)
[ -n "$lint" ] && printf 'dockerfile-utils lint Dockerfile:\n%s\n' "$lint"
if [ "$lint_ok" = yes ]; then
  summary+=("Dockerfile: dockerfile-utils lint clean${lint:+ (warnings above)}")
else
  summary+=("Dockerfile: dockerfile-utils lint FAILED")
  status=1
fi

printf '%s\n' "${summary[@]}"
exit "$status"
