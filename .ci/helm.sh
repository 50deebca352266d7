#!/usr/bin/env bash
# Helm, pinned, built from the Go module proxy (the first run compiles it;
# later runs come from the build cache). Used by .ci/run, `task helm` and
# the deploy package's render tests (RMSD_HELM).
set -euo pipefail
GOFLAGS= exec go run helm.sh/helm/v3/cmd/helm@v3.22.0 "$@"
