package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// The repository is Apache-2.0: LICENSE holds the license's terms, whole,
// and the copyright notice, and the metadata of every package the
// repository publishes names it.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatalf("no LICENSE at the repository's root: %v", err)
	}
	text := string(b)
	terms, notice, ok := strings.Cut(text, "   END OF TERMS AND CONDITIONS\n")
	// The terms are the canonical text's, byte for byte, up to END OF
	// TERMS AND CONDITIONS: the sha256 of those lines of
	// https://www.apache.org/licenses/LICENSE-2.0.txt (whose md5 is
	// 3b83ef96387f14655fc854ddc3c6bd57).
	const canonicalTerms = "5df2a0d87d6c562f0ea11c688ac52532aa28d744cabc7994ff0537f64b3b3320"
	sum := sha256.Sum256([]byte(terms))
	if !ok || hex.EncodeToString(sum[:]) != canonicalTerms {
		t.Errorf("LICENSE: the terms are not Apache-2.0's, whole (sha256 %x)", sum)
	}
	if !strings.Contains(notice, "Copyright 2026 The arca Authors") || !strings.Contains(notice, "http://www.apache.org/licenses/LICENSE-2.0") {
		t.Errorf("LICENSE: no copyright notice after the terms")
	}

	for _, p := range []string{"../../clients/typescript/package.json", "../../mcp/tsclient/package.json"} {
		var pkg struct{ License string }
		if b, err := os.ReadFile(p); err != nil || json.Unmarshal(b, &pkg) != nil || pkg.License != "Apache-2.0" {
			t.Errorf("%s: license %q, want Apache-2.0 (%v)", p, pkg.License, err)
		}
	}
	var py struct {
		Project struct {
			License      string
			LicenseFiles []string `toml:"license-files"`
		}
	}
	if b, err := os.ReadFile("../../clients/python/pyproject.toml"); err != nil || toml.Unmarshal(b, &py) != nil || py.Project.License != "Apache-2.0" ||
		len(py.Project.LicenseFiles) != 1 || py.Project.LicenseFiles[0] != "LICENSE" {
		t.Errorf("clients/python/pyproject.toml: project.license %q, license-files %q, want Apache-2.0 and LICENSE (%v)", py.Project.License, py.Project.LicenseFiles, err)
	}
	var ts struct{ Files []string }
	if b, err := os.ReadFile("../../clients/typescript/package.json"); err != nil || json.Unmarshal(b, &ts) != nil || !slices.Contains(ts.Files, "LICENSE") {
		t.Errorf("clients/typescript/package.json: files %q lack LICENSE (%v)", ts.Files, err)
	}
	// A package that leaves the repository carries the license's text
	// (Apache-2.0 §4(a)): the same file beside its metadata.
	for _, dir := range []string{"../../clients/python", "../../clients/typescript"} {
		if c, err := os.ReadFile(dir + "/LICENSE"); err != nil || string(c) != text {
			t.Errorf("%s/LICENSE is not the repository's LICENSE (%v)", dir, err)
		}
	}
}
