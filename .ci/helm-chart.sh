#!/usr/bin/env bash
# Lints deploy/helm/rmsd and renders it with its default values and with
# each values file in deploy/helm/rmsd/ci/. `.ci/run` and `task helm` both
# run this one script.
set -euo pipefail
cd "$(dirname "$0")/.."

chart=deploy/helm/rmsd
for values in "" $chart/ci/*.yaml; do
  args=()
  if [ -n "$values" ]; then args=(-f "$values"); fi
  echo "-- ${values:-default values}"
  .ci/helm.sh lint --strict "$chart" "${args[@]}"
  .ci/helm.sh template rms "$chart" --namespace rack-manager --kube-version 1.31.0 "${args[@]}" >/dev/null
done
