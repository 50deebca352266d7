#!/usr/bin/env bash
# Makes PostgreSQL available at 127.0.0.1:5432 for the store tests (user
# postgres, trust authentication; the tests create and drop their own
# databases). Nothing to do when the server already accepts connections; a
# stopped cluster is started; a machine without PostgreSQL gets Debian's
# package first (as install-protoc.sh does for protoc). Only a cluster this
# script installed or created is set to trust loopback connections.
set -euo pipefail
port=5432
cluster=main

accepting() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
as_root=()
[ "$(id -u)" = 0 ] || as_root=(sudo)

if accepting; then
  echo "PostgreSQL accepts connections at 127.0.0.1:$port"
  exit 0
fi
created=
if ! command -v pg_ctlcluster >/dev/null; then
  echo "PostgreSQL is not installed: installing Debian's postgresql package"
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  created=1
fi
version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
conf="/etc/postgresql/$version/$cluster"
if [ ! -f "$conf/postgresql.conf" ]; then
  echo "creating PostgreSQL $version cluster $cluster on port $port"
  "${as_root[@]}" pg_createcluster "$version" "$cluster" --port "$port" >/dev/null
  created=1
fi
if [ -n "$created" ] && ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
  "${as_root[@]}" sed -i "1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust" "$conf/pg_hba.conf"
fi
echo "starting PostgreSQL $version cluster $cluster"
"${as_root[@]}" pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start || true
for _ in $(seq 60); do
  if accepting; then
    if [ -n "$created" ]; then # the package may have started it before the edit
      "${as_root[@]}" pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" reload
    fi
    echo "PostgreSQL accepts connections at 127.0.0.1:$port"
    exit 0
  fi
  sleep 1
done
echo "PostgreSQL did not come up at 127.0.0.1:$port; its log: /var/log/postgresql/postgresql-$version-$cluster.log" >&2
exit 1
