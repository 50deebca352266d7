#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: cmd/rmsd's console test
# drives the web console in it, headless, through chromedp.
set -euo pipefail
if command -v chromium >/dev/null; then
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
