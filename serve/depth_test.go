package serve

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// TestWireReadableByCommonParsers runs a real `arca serve` on requests
// nested to the depth limit and one past it, in the id and in other fields,
// and on the id of 2,040 levels that once reached the audit wire, and reads
// every line it wrote on stdout and stderr with jq and with Python's json,
// each at its default limits (jq 1.6 stops at 256 levels, Python at its
// recursion limit of 1,000; serde_json's 128 is above MaxDepth too).
func TestWireReadableByCommonParsers(t *testing.T) {
	jq := needTool(t, "jq")
	python := needTool(t, "python3")
	b := buildArca(t)
	atLimit, overLimit := nested(manifest.MaxDepth-1), nested(manifest.MaxDepth) // inside the request object
	in := lines(
		`{"op":"list","id":`+atLimit+`}`,
		`{"op":"list","id":`+overLimit+`}`,
		`{"op":"list","id":1,"x":`+atLimit+`}`,
		`{"op":"list","id":2,"x":`+overLimit+`}`,
		`{"op":"list","id":3,"env":{"a":`+nested(manifest.MaxDepth-2)+`}}`,
		`{"op":"list","id":4,"env":{"a":`+overLimit+`}}`,
		`{"op":"list","id":`+nested(2040)+`}`,
		`{"op":"put","ref":"arca://app/db","value":"`+nested(2040)+`","id":5}`,
		`{"op":"manifest","id":6}`,
	)
	stdout, stderr, err := b.serve(t, in)
	if err != nil {
		t.Fatalf("arca serve: %v\nstderr:\n%s", err, short(string(stderr)))
	}
	tr := transcript{rawOut: stdout, rawErr: stderr, stdout: splitLines(t, "stdout", stdout), stderr: splitLines(t, "stderr", stderr)}
	checkWire(t, tr, []byte(in), false) // the schemas; the clock is real
	checkReplies(t, tr, []want{
		ok(atLimit), bad("null", tooDeep),
		bad("1", `unknown field "x"`), bad("null", tooDeep),
		bad("3", `field "env" must be a string`), bad("null", tooDeep),
		bad("null", tooDeep),
		ok("5"), ok("6"),
	})
	if n, m := len(tr.requestEvents(t)), len(tr.stdout); n != m {
		t.Errorf("%d request events for %d replies", n, m)
	}
	for name, ls := range map[string][]string{"stdout": tr.stdout, "stderr": tr.stderr} {
		for i, l := range ls {
			if msg, err := readWith(jq, []string{"-c", "."}, l); err != nil {
				t.Errorf("jq cannot read %s line %d: %v: %s\n%s", name, i+1, err, msg, short(l))
			}
		}
		if msg, err := readWith(python, []string{"-c", pythonReader}, strings.Join(ls, "\n")); err != nil {
			t.Errorf("python's json cannot read %s: %v: %s", name, err, msg)
		}
	}
}

// pythonReader reads every line of stdin with json.loads, at Python's
// default limits, and fails naming the first line it cannot read.
const pythonReader = `
import json, sys
for n, line in enumerate(sys.stdin, 1):
    try:
        json.loads(line)
    except Exception as e:
        sys.exit("line %d: %s" % (n, type(e).__name__))
`

// readWith runs a reader on text; err is its failure, msg what it said.
func readWith(path string, args []string, text string) (msg string, err error) {
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return strings.TrimSpace(short(string(out))), err
	}
	return "", nil
}
