package serve

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/backend"
)

// The transcripts in testdata/script are whole serve sessions: stdin, and
// stdout and stderr compared byte for byte. They run two commands, child
// processes of the test binary:
//
//	arca-serve [CONFIG]   Serve on the process's stdin, stdout and stderr; exit 1 on its error
//	arca-init [CONFIG]    create the identity and vault of the default env
//
// with the clock stopped at scriptNow and HOME from the environment (a
// fresh $WORK/home). CONFIG is an arca.toml loaded as --config would load
// it, or "-search" to find one as arca does without --config (./arca.toml
// first); without it, the built-in defaults.
// After every session a script runs `wire-valid STDIN`, which holds the
// session's stdout and stderr to the published schemas and to one event per
// reply, as every in-process session is (session_test.go); after a session
// that is meant to fail (`! exec arca-serve`), `wire-valid -failed STDIN`
// checks the schemas only. TestScriptsValidateTheWire makes sure no script
// forgets.

var updateScripts = flag.Bool("update-scripts", false, "rewrite the cmp files of testdata/script from what serve writes")

// scriptNow is the clock of every transcript; fixedNow is the same instant.
const scriptNow = "2026-01-02T03:04:05.000000006Z"

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"arca-serve": func() {
			cfg := scriptConfig()
			if err := Serve(context.Background(), Options{
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
				Config: cfg, Backends: backend.Kinds{}, Now: scriptClock,
			}); err != nil {
				os.Exit(1)
			}
		},
		"arca-init": func() {
			cfg := scriptConfig()
			svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Audit: audit.NewWriter(io.Discard, audit.SourceCLI, scriptClock), Now: scriptClock})
			if _, err := access.Init(svc, ""); err != nil {
				fmt.Fprintln(os.Stderr, "arca-init:", err)
				os.Exit(1)
			}
		},
	})
}

func scriptClock() time.Time {
	t, err := time.Parse(time.RFC3339Nano, scriptNow)
	if err != nil {
		panic(err)
	}
	return t
}

// scriptConfig loads the config named by the first argument, else parses
// the built-in defaults.
func scriptConfig() *ops.Config {
	var (
		cfg *ops.Config
		err error
	)
	switch {
	case len(os.Args) > 1 && os.Args[1] == "-search":
		cfg, err = ops.LoadConfig("", os.Getenv)
	case len(os.Args) > 1:
		cfg, err = ops.LoadConfig(os.Args[1], os.Getenv)
	default:
		cfg, err = ops.ParseConfig(nil, "arca.toml", os.Getenv)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(2)
	}
	return cfg
}

func TestScripts(t *testing.T) {
	if !fixedNow.Equal(scriptClock()) {
		t.Fatalf("scriptNow and fixedNow differ")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "ARCA_CONFIG", "ARCA_ENV", "ARCA_IDENTITY"} {
				env.Setenv(v, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"wire-valid":      wireValid,
			"cmpenv-unlinked": cmpenvUnlinked,
		},
	})
}

// wireValid checks the last session's stdout and stderr against the
// schemas and, unless -failed, the accounting of a session that exited 0;
// STDIN is the file the session read, to pair replies with requests.
func wireValid(ts *testscript.TestScript, neg bool, args []string) {
	failed := len(args) > 0 && args[0] == "-failed"
	if failed {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: wire-valid [-failed] STDIN")
	}
	var tr transcript
	tr.rawOut = []byte(ts.ReadFile("stdout"))
	tr.rawErr = []byte(ts.ReadFile("stderr"))
	sent := []byte(ts.ReadFile(args[0]))
	r := &scriptReporter{ts: ts}
	func() {
		defer func() {
			if v := recover(); v != nil && v != errScriptFatal {
				panic(v)
			}
		}()
		tr.stdout = splitLines(r, "stdout", tr.rawOut)
		tr.stderr = splitLines(r, "stderr", tr.rawErr)
		checkWire(r, tr, sent, !failed)
	}()
	if len(r.errs) > 0 {
		ts.Fatalf("the wire does not hold to the schemas:\n%s", strings.Join(r.errs, "\n"))
	}
}

// cmpenvUnlinked is cmpenv of the session's stderr with every event's link
// (its "prev") taken out, for a session whose events hold text that
// differs from run to run ($WORK): their links differ too. wire-valid
// checks the links themselves.
func cmpenvUnlinked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || args[0] != "stderr" {
		ts.Fatalf("usage: cmpenv-unlinked stderr WANT")
	}
	got := links.ReplaceAllString(ts.ReadFile("stderr"), "")
	want := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	if got != want {
		ts.Fatalf("stderr, its links taken out, and %s differ:\n%s\nwant:\n%s", args[1], got, want)
	}
}

// links matches an event's link, as the writer puts it last.
var links = regexp.MustCompile(`,"prev":"[0-9a-f]{64}"`)

var errScriptFatal = new(int)

// scriptReporter collects the checks' failures for a testscript command.
type scriptReporter struct {
	ts   *testscript.TestScript
	errs []string
}

func (r *scriptReporter) Helper() {}

func (r *scriptReporter) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *scriptReporter) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(errScriptFatal)
}

// TestScriptsValidateTheWire: every session a transcript runs is followed
// by wire-valid, and compares its stderr exactly.
func TestScriptsValidateTheWire(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var pending string // the last arca-serve line not yet followed by wire-valid
		sessions, cmps := 0, 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "-- ") {
				break // the files of the archive
			}
			fields := strings.Fields(line)
			switch {
			case len(fields) >= 2 && fields[0] == "exec" && fields[1] == "arca-serve",
				len(fields) >= 3 && fields[0] == "!" && fields[1] == "exec" && fields[2] == "arca-serve":
				if pending != "" {
					t.Errorf("%s: %q is not followed by wire-valid", file, pending)
				}
				pending, sessions = line, sessions+1
			case len(fields) >= 1 && fields[0] == "wire-valid":
				pending = ""
			case len(fields) >= 2 && (fields[0] == "cmp" || fields[0] == "cmpenv" || fields[0] == "cmpenv-unlinked") && fields[1] == "stderr":
				cmps++
			}
		}
		f.Close()
		if pending != "" {
			t.Errorf("%s: %q is not followed by wire-valid", file, pending)
		}
		if sessions == 0 || cmps < sessions {
			t.Errorf("%s: %d sessions but %d exact comparisons of stderr", file, sessions, cmps)
		}
	}
}
