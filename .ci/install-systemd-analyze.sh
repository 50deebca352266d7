#!/usr/bin/env bash
# Installs systemd-analyze (Debian's systemd package) when it is missing:
# the deploy package's tests verify the systemd unit with it.
set -euo pipefail
if command -v systemd-analyze >/dev/null; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
