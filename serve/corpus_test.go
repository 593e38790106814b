package serve

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/manifest"
)

// jsonTestSuite is nst/JSONTestSuite's test_parsing directory, in the
// repository's testdata (see its SOURCE.md). y_ files must parse, n_ files
// must not, i_ files are up to the parser.
var jsonTestSuite = filepath.Join("..", "testdata", "jsontestsuite", "test_parsing")

type corpusFile struct {
	name string
	data []byte
}

// loadJSONTestSuite reads the corpus; a missing corpus fails the test.
func loadJSONTestSuite(t testing.TB) []corpusFile {
	t.Helper()
	entries, err := os.ReadDir(jsonTestSuite)
	if err != nil {
		t.Fatalf("the JSONTestSuite corpus is missing: %v", err)
	}
	var files []corpusFile
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(jsonTestSuite, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, corpusFile{e.Name(), b})
	}
	if len(files) != 318 {
		t.Fatalf("the JSONTestSuite corpus has %d files, want 318", len(files))
	}
	return files
}

// TestJSONTestSuite feeds every corpus file to a session as request lines:
// every non-blank line gets exactly one reply, the loop survives to answer
// a last manifest request, and no input line reaches the audit wire.
func TestJSONTestSuite(t *testing.T) {
	files := loadJSONTestSuite(t)
	f := newFixture(t)
	for _, c := range files {
		t.Run(c.name, func(t *testing.T) {
			in := string(c.data) + "\n" + `{"op":"manifest","id":"end"}` + "\n"
			tr := f.serve(t, in)
			var inputLines []string
			for _, l := range strings.Split(string(c.data), "\n") {
				if !blank([]byte(l)) {
					inputLines = append(inputLines, l)
				}
			}
			rs := tr.responses(t)
			if len(rs) != len(inputLines)+1 {
				t.Fatalf("%d replies to %d non-blank lines and the final request", len(rs), len(inputLines))
			}
			for i, r := range rs[:len(rs)-1] {
				if r.OK || (r.code() != "bad_request" && r.code() != "unknown_op") {
					t.Errorf("line %d answered %s %q, want bad_request", i+1, r.code(), r.message())
				}
			}
			if last := rs[len(rs)-1]; !last.OK || string(last.ID) != `"end"` {
				t.Errorf("the last reply is %s, want the final manifest", short(tr.stdout[len(tr.stdout)-1]))
			}
			for _, l := range inputLines {
				if len(l) <= 8 {
					continue
				}
				esc := string(jsonstr.Append(nil, l))
				esc = esc[1 : len(esc)-1]
				if bytes.Contains(tr.rawErr, []byte(l)) || strings.Contains(string(tr.rawErr), esc) {
					t.Errorf("an input line reached the audit wire: %q", short(l))
				}
			}
		})
	}
	if n := f.spy.touched(); n != 0 {
		t.Errorf("corpus lines reached the vault %d times", n)
	}
}

// TestDecoderAgainstEncodingJSON compares the decoder with encoding/json on
// the corpus: whatever the decoder accepts, encoding/json must find valid
// and strictJSON must find I-JSON; every y_ file that is I-JSON is accepted
// as an id, and every n_ file refused.
func TestDecoderAgainstEncodingJSON(t *testing.T) {
	for _, c := range loadJSONTestSuite(t) {
		for _, line := range bytes.Split(c.data, []byte("\n")) {
			if _, problem := decodeRequest(line, nil); problem == "" && !json.Valid(line) {
				t.Errorf("%s: decoder accepts a line encoding/json refuses: %q", c.name, short(string(line)))
			}
		}
		// The whole file as the id of a request (a newline is whitespace to
		// the decoder: only the reader splits lines).
		req := append(append([]byte(`{"op":"manifest","id":`), c.data...), '}')
		r, problem := decodeRequest(req, nil)
		accepted := problem == ""
		switch {
		case accepted && !json.Valid(c.data):
			t.Errorf("%s: decoder accepts an id encoding/json refuses", c.name)
		case accepted && !bytes.Equal(r.ID, bytes.TrimRight(bytes.TrimLeft(c.data, " \t\r\n"), " \t\r\n")):
			t.Errorf("%s: id %q is not the bytes sent", c.name, short(string(r.ID)))
		case strings.HasPrefix(c.name, "n_") && accepted:
			t.Errorf("%s: decoder accepts invalid JSON as an id", c.name)
		case accepted && strictJSON(c.data) != nil:
			t.Errorf("%s: decoder accepts an id that is not I-JSON: %v", c.name, strictJSON(c.data))
		case strings.HasPrefix(c.name, "y_") && !accepted && len(c.data) <= manifest.MaxID && strictJSON(c.data) == nil:
			t.Errorf("%s: decoder refuses valid JSON as an id: %s", c.name, problem)
		}
	}
}
