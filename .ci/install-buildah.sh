#!/usr/bin/env bash
# Installs buildah (Debian's package) when it is missing: the deploy
# package's tests build the container image's runtime stage with it
# (vfs storage, chroot isolation: no daemon, no user namespaces).
set -euo pipefail
if command -v buildah >/dev/null; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah >/dev/null
