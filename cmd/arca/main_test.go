package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
	"github.com/rogpeppe/go-internal/testscript"
)

// The transcripts in testdata/script run the real CLI as a child process
// named "arca". Conventions every script follows:
//
//   - exit 0 is asserted with `exec arca ...`;
//   - every other exit status is asserted exactly with
//     `exitcode N arca ...` (never `! exec arca`, which accepts any
//     non-zero status; TestScriptConventions enforces this);
//   - after either, stdout and stderr are asserted (`stdout`/`stderr`
//     regexps, `! stdout .` for empty, or `cmp`/`cmpenv` for exact bytes).
//
// The child's clock is the real one unless the script sets ARCATEST_NOW
// (RFC 3339); then every reading of the clock in that process returns that
// instant, so timestamps in listings and audit events can be compared
// exactly. ARCATEST_NOW is read only here, never by arca itself.
//
// ARCATEST_USER and ARCATEST_HOST, when set, are the user and host the
// child's events carry in place of the process's own (audit.ProcessWho),
// which differ from machine to machine; every script starts with them set
// to ana and laptop. They too are read only here: arca itself takes who
// acted from the OS alone.
//
// ARCATEST_ROTATE_KILL_AT names a point of arca identity rotate
// (access.RotateIdentityAt): the child kills itself there (SIGKILL). It
// too is read only here.

const (
	testNowVar    = "ARCATEST_NOW"
	testKillAtVar = "ARCATEST_ROTATE_KILL_AT"
	testUserVar   = "ARCATEST_USER"
	testHostVar   = "ARCATEST_HOST"
)

func TestMain(m *testing.M) {
	cmds := map[string]func(){
		"arca": func() {
			c := processCLI(testClock())
			c.rotateAt = testRotateAt()
			if u, h := os.Getenv(testUserVar), os.Getenv(testHostVar); u != "" || h != "" {
				c.who = audit.Who{User: u, Host: h}
			}
			os.Exit(start(os.Args[1:], c))
		},
		"servehost": serveHost,
		"mcphost":   mcpHost,
		// age-plugin-arcatest is an age plugin, so that arca finds it on
		// $PATH as it finds a YubiKey's (plugin_test.go).
		"age-plugin-" + testPluginName: testPluginMain,
	}
	for name, fn := range helperCommands() {
		cmds[name] = fn
	}
	testscript.Main(m, cmds)
}

// testRotateAt returns nil, or a hook that kills the process at the point
// of an identity rotation $ARCATEST_ROTATE_KILL_AT names.
func testRotateAt() func(string) error {
	at := os.Getenv(testKillAtVar)
	if at == "" {
		return nil
	}
	return func(point string) error {
		if point == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return nil
	}
}

// testClock returns time.Now, or a clock stopped at $ARCATEST_NOW.
func testClock() func() time.Time {
	s := os.Getenv(testNowVar)
	if s == "" {
		return time.Now
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "test harness: bad %s %q: %v\n", testNowVar, s, err)
		os.Exit(99)
	}
	return func() time.Time { return t }
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script", nil))
}

// scriptParams runs the scripts in dir; more adds to each one's setup.
func scriptParams(dir string, more func(*testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// Nothing of the host's may leak in: HOME is a fresh
			// directory and every variable arca reads is pinned.
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			for _, v := range []string{
				"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
				"ARCA_CONFIG", "ARCA_ENV", "ARCA_IDENTITY", "ARCA_IDENTITY_KEY", "ARCA_PASSPHRASE_FILE", testNowVar, testKillAtVar,
				"GRPC_GO_LOG_SEVERITY_LEVEL", "ETCD_CLIENT_DEBUG",
			} {
				env.Setenv(v, "")
			}
			env.Setenv(testUserVar, "ana")
			env.Setenv(testHostVar, "laptop")
			name, value, _ := strings.Cut(raceEnv(), "=")
			env.Setenv(name, value)
			if more != nil {
				return more(env)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"killed":    cmdKilled,
			"filemode":  cmdFilemode,
			"flipbyte":  cmdFlipbyte,
			"swapblobs": cmdSwapblobs,
			"mkfile":    cmdMkfile,
			"hexfile":   cmdHexfile,
			"linecount": cmdLinecount,
			"chomp":     cmdChomp,
			"protect":   cmdProtect,
			"unlinked":  cmdUnlinked,
			"chain":     cmdChain,
		},
	}
}

// TestScriptConventions keeps the exit-status convention: a script never
// asserts failure with `! exec arca`, which would accept any non-zero status.
func TestScriptConventions(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts found")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "-- ") {
				break // the archive's files start here
			}
			fields := strings.Fields(line)
			for len(fields) > 0 && strings.HasPrefix(fields[0], "[") {
				fields = fields[1:] // a condition such as [linux]
			}
			if len(fields) >= 3 && fields[0] == "!" && fields[1] == "exec" && fields[2] == "arca" {
				t.Errorf("%s:%d: use `exitcode N arca ...` to assert a failure's exact status", f, n)
			}
		}
	}
}

// exitcode N PROG [ARGS...] runs PROG like exec does (stdout and stderr are
// kept for the following assertions) and fails unless it exits with exactly
// status N.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (give the status expected)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want < 0 || want > 255 {
		ts.Fatalf("exitcode: bad status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// killed PROG [ARGS...] runs PROG like exec does and fails unless it was
// killed by SIGKILL.
func cmdKilled(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: killed PROG [ARGS...]")
	}
	err := ts.Exec(args[0], args[1:]...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		ts.Fatalf("%s: %v, want it killed", args[0], err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		ts.Fatalf("%s: %v, want it killed by SIGKILL", args[0], err)
	}
}

// filemode MODE PATH... asserts each path's permission bits are MODE (octal).
func cmdFilemode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: filemode MODE PATH...")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("filemode: bad mode %q", args[0])
	}
	for _, p := range args[1:] {
		fi, err := os.Stat(ts.MkAbs(p))
		ts.Check(err)
		if got := fi.Mode().Perm(); uint64(got) != want {
			ts.Fatalf("%s has mode %04o, want %04o", p, got, want)
		}
	}
}

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// flipbyte FILE LINE COL changes the byte at 0-based column COL of 1-based
// line LINE (a negative COL counts from the end of the line, -1 being its
// last byte before the newline): a base64 character becomes the next one of the base64 alphabet
// (so the line still parses and only the decoded bytes change), any other
// byte is XORed with 1.
func cmdFlipbyte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: flipbyte FILE LINE COL")
	}
	file := ts.MkAbs(args[0])
	lineNo, err1 := strconv.Atoi(args[1])
	col, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil || lineNo < 1 {
		ts.Fatalf("flipbyte: bad LINE or COL")
	}
	data, err := os.ReadFile(file)
	ts.Check(err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if lineNo > len(lines) {
		ts.Fatalf("flipbyte: %s has no line %d", args[0], lineNo)
	}
	n := len(bytes.TrimSuffix(lines[lineNo-1], []byte("\n")))
	if col < 0 {
		col += n
	}
	if col < 0 || col >= n {
		ts.Fatalf("flipbyte: line %d of %s has no column %s", lineNo, args[0], args[2])
	}
	b := &lines[lineNo-1][col]
	if i := strings.IndexByte(b64, *b); i >= 0 {
		*b = b64[(i+1)%len(b64)]
	} else {
		*b ^= 1
	}
	ts.Check(os.WriteFile(file, bytes.Join(lines, nil), 0o600))
}

// swapblobs FILE LINE1 LINE2 swaps the sealed blobs of two record lines of
// a file vault (`"<slot>":"<blob>"[,]`), leaving each slot id in place.
func cmdSwapblobs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: swapblobs FILE LINE1 LINE2")
	}
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	lines := strings.SplitAfter(string(data), "\n")
	split := func(arg string) (n int, head, blob, tail string) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > len(lines) {
			ts.Fatalf("swapblobs: no line %s", arg)
		}
		l := lines[n-1]
		i := strings.Index(l, `":"`)
		j := strings.LastIndexByte(l, '"')
		if i < 0 || j <= i+3 {
			ts.Fatalf("swapblobs: line %d is not a record line", n)
		}
		return n, l[:i+3], l[i+3 : j], l[j:]
	}
	n1, h1, b1, t1 := split(args[1])
	n2, h2, b2, t2 := split(args[2])
	lines[n1-1], lines[n2-1] = h1+b2+t1, h2+b1+t2
	ts.Check(os.WriteFile(file, []byte(strings.Join(lines, "")), 0o600))
}

// mkfile FILE SIZE writes SIZE bytes of printable text: lines of 63
// characters and a newline, the last one cut short.
func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkfile FILE SIZE")
	}
	size, err := strconv.Atoi(args[1])
	if err != nil || size < 0 {
		ts.Fatalf("mkfile: bad SIZE %q", args[1])
	}
	const line = "The quick brown fox jumps over the lazy dog 0123456789 ABCDEFG\n"
	b := bytes.Repeat([]byte(line), size/len(line)+1)[:size]
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
}

// hexfile FILE HEX writes the bytes HEX decodes to.
func cmdHexfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hexfile FILE HEX")
	}
	b, err := hex.DecodeString(args[1])
	if err != nil {
		ts.Fatalf("hexfile: %v", err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
}

// linecount N FILE asserts FILE (or stdout/stderr) has exactly N lines, each
// ended by a newline.
func cmdLinecount(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: linecount N FILE")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("linecount: bad N %q", args[0])
	}
	s := ts.ReadFile(args[1])
	if s != "" && !strings.HasSuffix(s, "\n") {
		ts.Fatalf("%s: last line has no newline", args[1])
	}
	if got := strings.Count(s, "\n"); got != want {
		ts.Fatalf("%s has %d lines, want %d", args[1], got, want)
	}
}

// unlinked FILE OUT writes FILE, an audit trail, to OUT with every
// event's link (its "prev") taken out: for comparing a trail's events
// with cmp when the links are checked by chain.
func cmdUnlinked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unlinked FILE OUT")
	}
	out := regexp.MustCompile(`,"prev":"[0-9a-f]{64}"`).ReplaceAllString(ts.ReadFile(args[0]), "")
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600); err != nil {
		ts.Fatalf("unlinked: %v", err)
	}
}

// chain FILE fails unless FILE, an audit trail, is one chain from its
// first event (seq 1), as arca audit verify checks it.
func cmdChain(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: chain FILE")
	}
	res, err := trail.Verify(strings.NewReader(ts.ReadFile(args[0])), nil)
	ok := err == nil && res.Streams == 1 && res.First == 1 && !res.MidChain
	switch {
	case neg && ok:
		ts.Fatalf("%s is one chain from seq 1 (%d events)", args[0], res.Lines)
	case !neg && !ok:
		ts.Fatalf("%s is not one chain from seq 1: %+v, %v", args[0], res, err)
	}
}

// chomp FILE removes the one trailing newline every txtar file ends with,
// for values that must not end in one.
func cmdChomp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: chomp FILE")
	}
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	if !bytes.HasSuffix(data, []byte("\n")) {
		ts.Fatalf("chomp: %s does not end in a newline", args[0])
	}
	ts.Check(os.WriteFile(file, data[:len(data)-1], 0o600))
}
