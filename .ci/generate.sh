#!/usr/bin/env bash
# Regenerates grpc/rmspb, grpc/rmspbv2, grpc/adminpb, grpc/opspb, hw/nmxc/nmxcpb and member/rackpb from proto/. With --check, generates
# into a scratch copy and fails if the committed code differs (stale).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$(go env GOPATH)/bin:$PATH"
out="$root"
if [ "${1:-}" = "--check" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  mkdir -p "$out/grpc/rmspb" "$out/grpc/rmspbv2" "$out/grpc/adminpb" "$out/grpc/opspb" "$out/hw/nmxc/nmxcpb" "$out/member/rackpb"
fi
protoc -I "$root/proto" \
  --go_out="$out" --go_opt=module=github.com/rmsd/rmsd \
  --go-grpc_out="$out" --go-grpc_opt=module=github.com/rmsd/rmsd \
  rack_manager/rack_manager.proto rack_manager_v2/rack_manager_v2.proto rmsd_admin/admin.proto rmsd_ops/ops.proto \
  nmx_c/nmx_c.proto rmsd_cluster/rack.proto
if [ "${1:-}" = "--check" ]; then
  status=0
  for f in grpc/rmspb/rack_manager.pb.go grpc/rmspb/rack_manager_grpc.pb.go \
           grpc/rmspbv2/rack_manager_v2.pb.go grpc/rmspbv2/rack_manager_v2_grpc.pb.go \
           grpc/adminpb/admin.pb.go grpc/adminpb/admin_grpc.pb.go \
           grpc/opspb/ops.pb.go grpc/opspb/ops_grpc.pb.go \
           hw/nmxc/nmxcpb/nmx_c.pb.go hw/nmxc/nmxcpb/nmx_c_grpc.pb.go \
           member/rackpb/rack.pb.go; do
    if ! diff -q "$out/$f" "$root/$f" >/dev/null; then
      echo "stale generated code: $f (run: task generate)" >&2
      status=1
    fi
  done
  [ $status = 0 ] && echo "generated code is up to date"
  exit $status
fi
