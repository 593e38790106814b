#!/usr/bin/env bash
# Builds arca's release binaries: scripts/release.sh [OUTDIR]
#
# For each platform, a static binary (CGO_ENABLED=0, -trimpath) named
# arca-VERSION-OS-ARCH in OUTDIR (default dist/), with VERSION, the output
# of `git describe --tags --always --dirty`, stamped in: `arca --version`
# prints it. Then OUTDIR/SHA256SUMS, in sha256sum's format, one line per
# binary; verify a download with `sha256sum --check --ignore-missing SHA256SUMS`.
#
# RELEASE_PLATFORMS, space-separated OS/ARCH pairs, chooses the platforms;
# the default is linux/amd64 linux/arm64 darwin/amd64 darwin/arm64.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$repo/dist}"
platforms="${RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"

if ! version="$(git -C "$repo" describe --tags --always --dirty 2>/dev/null)" || [ -z "$version" ]; then
  echo "release.sh: cannot name the version: $repo is not a git checkout (git describe failed)" >&2
  exit 1
fi
if [ -z "${platforms// /}" ]; then
  echo "release.sh: RELEASE_PLATFORMS names no platform" >&2
  exit 2
fi
known="$(go tool dist list)"
for p in $platforms; do
  if ! grep -qx "$p" <<<"$known"; then
    echo "release.sh: $p is not a platform Go builds for (go tool dist list)" >&2
    exit 2
  fi
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
names=()
for p in $platforms; do
  name="arca-$version-${p%/*}-${p#*/}"
  (cd "$repo" && CGO_ENABLED=0 GOOS="${p%/*}" GOARCH="${p#*/}" go build -trimpath \
    -ldflags "-s -w -X github.com/arca-secrets/arca/manifest.version=$version" \
    -o "$out/$name" ./cmd/arca)
  names+=("$name")
done

if command -v sha256sum >/dev/null; then
  sum=(sha256sum)
else
  sum=(shasum -a 256) # macOS; the same format
fi
(cd "$out" && "${sum[@]}" "${names[@]}" >SHA256SUMS)
echo "release.sh: $version: ${names[*]} and SHA256SUMS in $out" >&2
