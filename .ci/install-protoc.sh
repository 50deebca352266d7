#!/usr/bin/env bash
# Installs the pinned code generators when they are missing: protoc 3.21 from
# Debian (protobuf-compiler + libprotobuf-dev for the well-known types),
# protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2.
set -euo pipefail
if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/timestamp.proto ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler libprotobuf-dev >/dev/null
  else
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler libprotobuf-dev >/dev/null
  fi
fi
gobin="$(go env GOPATH)/bin"
want_go="protoc-gen-go v1.36.12"
want_grpc="protoc-gen-go-grpc 1.6.2"
if [ "$("$gobin/protoc-gen-go" --version 2>/dev/null)" != "$want_go" ]; then
  go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
fi
if [ "$("$gobin/protoc-gen-go-grpc" --version 2>/dev/null)" != "$want_grpc" ]; then
  go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
fi
