#!/usr/bin/env bash
# Installs Debian's etcd-server when etcd is missing: cluster mode's tests
# start a private etcd on loopback for the etcd membership provider.
set -euo pipefail
if command -v etcd >/dev/null; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
