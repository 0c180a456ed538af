#!/usr/bin/env bash
# Kubernetes manifests, without a cluster: deploy/kubernetes/base (and base/core) and the simulator
# overlay render with `kubectl kustomize`, with every Kustomize at hand: the kubectl on PATH (v5 here)
# and Debian's kubernetes-client (kubectl 1.20, Kustomize v2.0), which must give the same objects;
# every object is valid against the Kubernetes and Prometheus Operator schemas (kubernetes-models);
# the PrometheusRule is what config/prometheus/alerts.yml generates. The examples
# (deploy/kubernetes/examples/*) render with the current Kustomize only, and validate the same way.
# Prints the kubectl to use as its last line; CI exports it as KUBECTL before `npm test`, whose
# test/kubernetes.test.ts renders with it.
# Debian's package is downloaded and unpacked, not installed (it would conflict with a kubectl
# already on the machine), cached under the ignored artifacts/; KUBECTL_PKG_DIR overrides the place.
set -euo pipefail
cd "$(dirname "$0")/../.."

pkg="${KUBECTL_PKG_DIR:-artifacts/kubectl-pkg}"
legacy="$pkg/usr/bin/kubectl"
if [ ! -x "$legacy" ]; then
  echo "fetching Debian's kubernetes-client into $pkg" >&2
  dl=$(mktemp -d)
  (cd "$dl" && apt-get update -qq >/dev/null && apt-get download kubernetes-client >/dev/null)
  mkdir -p "$pkg"
  dpkg -x "$dl"/kubernetes-client_*.deb "$pkg"
  rm -rf "$dl"
fi
legacy=$(realpath "$legacy")
kubectls=()
if found=$(command -v kubectl); then kubectls+=("$found"); fi
kubectls+=("$legacy")
for k in "${kubectls[@]}"; do
  echo "$k: $("$k" version --client 2>/dev/null | head -n 2 | tr '\n' ' ')" >&2
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for dir in deploy/kubernetes/base deploy/kubernetes/base/core deploy/kubernetes/overlays/simulator; do
  renders=()
  for i in "${!kubectls[@]}"; do
    out="$tmp/$(echo "$dir" | tr / _).$i.yaml"
    if ! "${kubectls[$i]}" kustomize "$dir" >"$out" 2>"$tmp/err"; then
      echo "FAIL ${kubectls[$i]} kustomize $dir:" >&2
      grep -v '^# Warning' "$tmp/err" >&2 || true
      status=1
      continue
    fi
    renders+=("$out")
  done
  if [ "${#renders[@]}" -gt 0 ]; then
    printf '%s: ' "$dir" >&2
    node scripts/kubernetes-validate.mjs "${renders[@]}" >&2 || status=1
  fi
done
# The examples use current Kustomize syntax (resources, patches), which Kustomize v2.0 cannot read:
# rendered with the first kubectl only (the one on PATH, v5 here).
for dir in deploy/kubernetes/examples/*/; do
  dir=${dir%/}
  out="$tmp/$(echo "$dir" | tr / _).yaml"
  if ! "${kubectls[0]}" kustomize "$dir" >"$out" 2>"$tmp/err"; then
    echo "FAIL ${kubectls[0]} kustomize $dir:" >&2
    grep -v '^# Warning' "$tmp/err" >&2 || true
    status=1
    continue
  fi
  printf '%s: ' "$dir" >&2
  node scripts/kubernetes-validate.mjs "$out" >&2 || status=1
done
node scripts/prometheus-rule.mjs --check >&2 || status=1
[ "$status" -eq 0 ] || exit "$status"
echo "${kubectls[0]}"
