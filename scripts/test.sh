#!/usr/bin/env bash
# The test suite, with the tools it needs beyond Go: the opa binary that the
# PDP test drives (installed into $(go env GOPATH)/bin when missing) and
# Debian's etcd-server, whose etcd the shared-vault tests start on their own
# loopback ports (installed with apt-get when missing; needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v opa >/dev/null && [ ! -x "$(go env GOPATH)/bin/opa" ]; then
  go install github.com/open-policy-agent/opa@v1.22.4
fi
if ! command -v etcd >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
  # The package starts a system etcd on 2379; the tests need none.
  $sudo systemctl stop etcd 2>/dev/null || $sudo service etcd stop 2>/dev/null || true
fi
go vet ./...
# arca builds and vets on macOS too (a stub or a port of every Linux-only call).
GOOS=darwin GOARCH=arm64 go vet ./...
go test -race -count=1 ./...
