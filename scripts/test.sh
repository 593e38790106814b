#!/usr/bin/env bash
# The test suite, with the one tool it needs beyond Go: the opa binary that
# the PDP test drives (installed into $(go env GOPATH)/bin when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v opa >/dev/null && [ ! -x "$(go env GOPATH)/bin/opa" ]; then
  go install github.com/open-policy-agent/opa@v1.22.4
fi
go vet ./...
go test -race -count=1 ./...
