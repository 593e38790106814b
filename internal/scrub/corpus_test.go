package scrub

import (
	"bytes"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corpusSize is how much text the false-positive test reads.
const corpusSize = 10 << 20

// goSource reads Go source files from the standard library's tree (that
// of the go command running the test), in the order of their paths, until
// it has n bytes.
func goSource(t *testing.T, n int) []byte {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("the false-positive corpus is Go's own source: go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	var paths []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil || len(paths) == 0 {
		t.Fatalf("the false-positive corpus is Go's own source, and %s has none: %v", root, err)
	}
	slices.Sort(paths)
	text := make([]byte, 0, n)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, b[:min(len(b), n-len(text))]...)
		if len(text) == n {
			return text
		}
	}
	t.Fatalf("%s holds only %d bytes of Go source, the test wants %d", root, len(text), n)
	return nil
}

// TestNoFalsePositives: 10 MiB of Go source and log lines, with 1,000
// random 32-byte values registered (half of them letters and digits, half
// any bytes), has nothing redacted.
func TestNoFalsePositives(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 1000))
	text := append(goSource(t, corpusSize*3/4), logText(corpusSize/4, nil)...)
	s := NewSet()
	var first []byte
	const alnums = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range 1000 {
		v := randomBytes(r, 32)
		if i%2 == 0 {
			for j := range v {
				v[j] = alnums[int(v[j])%len(alnums)]
			}
		}
		if err := s.Add("v"+strconv.Itoa(i), v); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = v
		}
	}
	out, rs := s.Scrub(text)
	if len(rs) != 0 || !bytes.Equal(out, text) {
		t.Errorf("%d labels redacted in text with none of the values: %v", len(rs), rs)
	}
	// The same text with one value planted, in hex, loses that alone.
	mid := len(text) / 2
	planted := slices.Concat(text[:mid], []byte(" 0x"+hex.EncodeToString(first)+" "), text[mid:])
	want := slices.Concat(text[:mid], []byte(" 0x<redacted:v0> "), text[mid:])
	if out, _ := s.Scrub(planted); !bytes.Equal(out, want) {
		t.Error("a planted value was not the one thing redacted")
	}
}
