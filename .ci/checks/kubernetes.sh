#!/usr/bin/env bash
# Kubernetes manifests, without a cluster: deploy/kubernetes/base (and base/core), the simulator
# overlay and the examples (deploy/kubernetes/examples/*) render with `kubectl kustomize`, and with
# NOTHING on stderr: Kustomize v5 warns about deprecated fields (`bases`, `patchesStrategicMerge`,
# ...) there, and every `kubectl apply -k` would print the same warning to whoever deploys, so a
# warning fails this check. Every object is valid against the Kubernetes and Prometheus Operator
# schemas (kubernetes-models); the PrometheusRule is what config/prometheus/alerts.yml generates.
# Prints the kubectl to use as its last line; CI exports it as KUBECTL before `npm test`, whose
# test/kubernetes.test.ts renders with it (and asserts an empty stderr too).
#
# One Kustomize only: the kubectl on PATH (this machine's is 1.32, Kustomize v5.5), required to
# bundle Kustomize v5 or newer, the oldest the manifests are written for (kubectl 1.27+). The
# second render with Debian's kubectl 1.20 (Kustomize v2.0) is gone with the v2 syntax: it cannot
# read `patches`, and the only other kubectl the project's registries offer is that one, so a
# second *current* version would have to be downloaded from elsewhere, which CI cannot do.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! kubectl=$(command -v kubectl); then
  echo "FAIL no kubectl on PATH: install one whose Kustomize is v5 or newer (kubectl 1.27+)" >&2
  exit 1
fi
version=$("$kubectl" version --client 2>/dev/null || true)
echo "$kubectl: $(echo "$version" | head -n 2 | tr '\n' ' ')" >&2
major=$(echo "$version" | sed -n 's/^Kustomize Version: v\([0-9]*\)\..*/\1/p')
if [ -z "$major" ] || [ "$major" -lt 5 ]; then
  echo "FAIL $kubectl bundles Kustomize '${major:-?}', the manifests need v5 or newer (kubectl 1.27+)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for dir in deploy/kubernetes/base deploy/kubernetes/base/core deploy/kubernetes/overlays/simulator deploy/kubernetes/examples/*/; do
  dir=${dir%/}
  out="$tmp/$(echo "$dir" | tr / _).yaml"
  if ! "$kubectl" kustomize "$dir" >"$out" 2>"$tmp/err"; then
    echo "FAIL $kubectl kustomize $dir:" >&2
    cat "$tmp/err" >&2
    status=1
    continue
  fi
  if [ -s "$tmp/err" ]; then
    echo "FAIL $kubectl kustomize $dir printed on stderr (a deprecated field? the warning names its replacement):" >&2
    cat "$tmp/err" >&2
    status=1
  fi
  printf '%s: ' "$dir" >&2
  node scripts/kubernetes-validate.mjs "$out" >&2 || status=1
done
node scripts/prometheus-rule.mjs --check >&2 || status=1
[ "$status" -eq 0 ] || exit "$status"
echo "$kubectl"
