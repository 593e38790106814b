package manifest

import "runtime/debug"

// Release is the arca release this source is, what a build reports when
// nothing stamped another version into it (go test, go build -buildvcs=false).
const Release = "0.1.0"

// version is stamped in at link time by scripts/release.sh:
//
//	go build -ldflags "-X github.com/arca-secrets/arca/manifest.version=$(git describe --tags --always --dirty)"
//
// It is the one package-level variable arca has: the linker can set only
// a variable, and nothing assigns it at run time.
var version string

// Version is the version this build reports (arca --version, serve's start
// event, the manifest): the one stamped in at link time; else the main
// module's version Go recorded (go install …@v1.2.3 records v1.2.3, a
// build in a git checkout a pseudo-version naming the commit); else
// Release.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return Release
}
