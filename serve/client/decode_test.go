package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// differ decodes line as a response to want into a T by both paths and
// reports how they differ, "" when they agree. When the fast path takes
// the line it must give what encoding/json gives, error included; when
// encoding/json refuses the line, the fast path must not take it.
func differ[T any](line, want []byte) (diff string, handled bool) {
	var a, b T
	handled, errA := fast(line, sent{id: want, ref: "arca://app/db", env: "default"}, &a)
	errB := slow(line, want, &b)
	if !handled {
		return "", false
	}
	if !reflect.DeepEqual(a, b) {
		return "the results differ", true
	}
	var ea, eb *Error
	switch {
	case errA == nil && errB == nil:
	case errA == nil || errB == nil:
		return "one path failed, the other did not: " + errString(errA) + " | " + errString(errB), true
	case errors.As(errA, &ea) != errors.As(errB, &eb):
		return "the errors differ in kind: " + errA.Error() + " | " + errB.Error(), true
	case ea != nil && !reflect.DeepEqual(ea, eb):
		return "the wire errors differ", true
	case errA.Error() != errB.Error():
		return "the errors differ: " + errA.Error() + " | " + errB.Error(), true
	}
	return "", true
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// differAll runs differ for every result type the client decodes, the
// ones without a fast path too (the envelope alone may still be fast).
// handled lists the types whose fast path took the line.
func differAll(line, want []byte) (diff string, handled []string) {
	for name, f := range map[string]func(line, want []byte) (string, bool){
		"Got": differ[Got], "Put": differ[Put], "Rotated": differ[Rotated], "Removed": differ[Removed],
		"Listed": differ[Listed], "Checked": differ[Checked], "Manifest": differ[Manifest], "none": differ[struct{}],
		"ScrubResult": differ[ScrubResult], "HTTPResult": differ[HTTPResult], "ExecResult": differ[ExecResult], "ProxyResult": differ[ProxyResult],
	} {
		d, h := f(line, want)
		if d != "" {
			return name + ": " + d, nil
		}
		if h {
			handled = append(handled, name)
		}
	}
	return "", handled
}

// sessionLines runs one serve session over the requests, in a home with
// one record put by the CLI (a NUL, a line end and unicode in its value), and returns its
// response lines.
func sessionLines(t testing.TB, toml string, requests ...string) [][]byte {
	t.Helper()
	o := homeTB(t, toml)
	put := exec.Command(arcaBin, "put", "arca://app/bin")
	put.Env, put.Dir, put.Stdin = o.Environ, o.Dir, strings.NewReader("\x00 bytes \x7f é \u2028 \U0001F600\n")
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("arca put: %v: %s", err, out)
	}
	cmd := command(o)
	cmd.Stdin = strings.NewReader(strings.Join(requests, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // a session that fails its commit or its PDP still answers
	var lines [][]byte
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, maxResponse)
	for sc.Scan() {
		lines = append(lines, append(bytes.Clone(sc.Bytes()), '\n'))
	}
	if len(lines) == 0 {
		t.Fatalf("serve answered none of %d requests", len(requests))
	}
	return lines
}

// homeTB is home for tests and fuzz targets alike.
func homeTB(t testing.TB, toml string) Options {
	t.Helper()
	dir := t.TempDir()
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	cmd := exec.Command(arcaBin, "init")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("arca init: %v: %s", err, out)
	}
	cfg := filepath.Join(dir, "arca.toml")
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{Binary: arcaBin, Config: cfg, Environ: env, Dir: dir}
}

// pdp is a config whose PDP prints verdict, then exits with status.
func pdp(verdict string, status int, allowOnError bool) string {
	cmd := "exit 3"
	if status == 0 {
		cmd = "echo '" + verdict + "'"
	}
	cfg := "[serve.pdp]\nexec = " + quoteTOML(cmd) + "\n"
	if allowOnError {
		cfg += "allow_on_error = true\n"
	}
	return cfg
}

func quoteTOML(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// realLines are the lines serve writes for every op and every error code,
// with and without a policy verdict. Each request's id is its position,
// from 1.
func realLines(t testing.TB) [][]byte {
	ops := []string{
		`{"id":1,"op":"put","ref":"arca://app/db","value":"s3cret"}`,
		`{"id":2,"op":"get","ref":"arca://app/db","actor":"agent:test"}`,
		`{"id":3,"op":"rotate","ref":"arca://app/db","value":"q\"uo\\te \n\t\u00e9\u2028\ud83d\ude00 \u0000"}`,
		`{"id":4,"op":"get","ref":"arca://app/db"}`,
		`{"id":5,"op":"put","ref":"arca://app/db","value":"again"}`,
		`{"id":6,"op":"list"}`,
		`{"id":7,"op":"check"}`,
		`{"id":8,"op":"manifest"}`,
		`{"id":9,"op":"get","ref":"arca://app/bin"}`,
		`{"id":10,"op":"rm","ref":"arca://app/db"}`,
		`{"id":11,"op":"get","ref":"arca://app/db"}`,
		`{"id":12,"op":"get","ref":"arca://bad ref"}`,
		`{"id":13,"op":"get","ref":"arca://app/db","env":"nope"}`,
		`{"id":14,"op":"export"}`,
		`{"id":15,"op":"run"}`,
		`{"op":"list"`,
		`{"id":17,"op":"list"} {"id":18}`,
		`{"id":"a-1","op":"list","OP":"x"}`,
		`{"id":{"job":7,"step":[1,2.5e3]},"op":"check"}`,
		`{"id":20,"op":"shutdown"}`,
	}
	var lines [][]byte
	lines = append(lines, sessionLines(t, "", ops...)...)
	gets := []string{`{"id":1,"op":"put","ref":"arca://app/db","value":"v"}`, `{"id":2,"op":"get","ref":"arca://app/db"}`, `{"id":3,"op":"get","ref":"arca://app/none"}`}
	lines = append(lines, sessionLines(t, pdp(`{"allow": true, "reason": "ok by \"policy\"", "obligations": ["log-access", "notify:oncall"]}`, 0, false), gets...)...)
	lines = append(lines, sessionLines(t, pdp(`{"allow": true, "obligations": []}`, 0, false), gets...)...)
	lines = append(lines, sessionLines(t, pdp(`{"allow": false, "reason": "no"}`, 0, false), gets...)...)
	lines = append(lines, sessionLines(t, pdp("", 3, false), gets...)...)
	lines = append(lines, sessionLines(t, pdp("", 3, true), gets...)...)
	return lines
}

// (a) every line a real session writes: both paths agree, and the fast
// path takes the shapes it exists for.
func TestDecodeRealLines(t *testing.T) {
	lines := realLines(t)
	for i, line := range lines {
		id := idOf(line)
		for _, want := range [][]byte{id, []byte("999")} {
			diff, handled := differAll(line, want)
			if diff != "" {
				t.Errorf("line %d %s: %s", i, line, diff)
			}
			if typ := fastType(line); typ != "" && !slices.Contains(handled, typ) {
				t.Errorf("line %d %s: the fast path did not take it as %s (took it as %v)", i, line, typ, handled)
			}
		}
	}
}

// fastType is the type a canonical line is the response for, when the
// fast path must take it as that.
func fastType(line []byte) string {
	has := func(s string) bool { return bytes.Contains(line, []byte(s)) }
	switch {
	case has(`"ok":false`):
		return "Listed" // an error: the envelope alone, whatever the type
	case has(`"result":{}`):
		return "none"
	case !has(`"result":{"ref":`):
		return ""
	case has(`"removed":true`):
		return "Removed"
	case has(`"created":`):
		return "Put"
	case has(`"value":`):
		return "Got"
	}
	return "Rotated"
}

// idOf is the raw id of a canonical line.
func idOf(line []byte) []byte {
	rest := bytes.TrimPrefix(line, []byte(`{"id":`))
	return rest[:bytes.Index(rest, []byte(`,"ok":`))]
}

// (b) edge cases by hand, each decoded as every type.
var edgeLines = []string{
	// The canonical shapes.
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"v","version":3,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:16:08.506410195Z","rotated_at":"2026-11-30T08:14:14.387329649Z"}}`,
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":1,"created":true,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}`,
	`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","removed":true,"version":2}}`,
	`{"id":7,"ok":true,"result":{}}`,
	`{"id":7,"ok":false,"error":{"code":"not_found","message":"arca://app/missing not found in env \"default\""}}`,
	`{"id":7,"ok":false,"error":{"code":"denied","message":"denied by policy: no"},"policy":{"allow":false,"reason":"no"}}`,
	`{"id":7,"ok":true,"result":{"value":"v"},"policy":{"allow":true,"reason":"r","obligations":["a","b"],"degraded":true}}`,
	// Escapes and unicode in strings, values and keys.
	`{"id":7,"ok":true,"result":{"value":"\"\\\/\b\f\n\r\t\u00e9\u2028\ud83d\ude00\u0000"}}`,
	`{"id":7,"ok":true,"result":{"value":"\ud83d","ref":"\udc00\ud800\u0041","env":"\ud800\ud800"}}`,
	`{"id":7,"ok":true,"result":{"value":"é€😀","ref":"é€😀","env":"\u00e9"}}`,
	"{\"id\":7,\"ok\":true,\"result\":{\"value\":\"\xff\xfe\",\"ref\":\"\xff\xe9\",\"env\":\"a\xc3\"}}",
	"{\"id\":7,\"ok\":true,\"result\":{\"value\":\"\xff\\n\",\"ref\":\"\xed\xa0\x80\"}}",
	`{"id":7,"ok":true,"result":{"value":"a\qb"}}`,
	`{"id":7,"ok":true,"result":{"value":"\u12"}}`,
	"{\"id\":7,\"ok\":true,\"result\":{\"value\":\"a\tb\"}}",
	`{"id":7,"ok":true,"result":{"value":""}}`,
	`{"id":7,"ok":true,"result":{"\u0076alue":"v"}}`,
	`{"id":7,"ok":true,"result":{"VALUE":"v","Ref":"r"}}`,
	`{"ID":7,"ok":true}`, `{"iD":7,"Ok":true}`, "{\"id\":7,\"o\xe2\x84\xaa\":true}", `{"id":7,"\u006fk":true}`,
	// Unknown fields, added anywhere, of any type, and fields in another order.
	`{"id":7,"ok":true,"added":{"a":[1,2,{"b":null}],"c":"\u00e9"},"result":{"extra":[true,false,null,-0.5e+3],"value":"v","version":1},"more":1}`,
	`{"result":{"created_at":"2026-11-30T08:14:14.381353202Z","version":9,"value":"v","env":"e","ref":"r"},"ok":true,"id":7}`,
	`{"policy":{"extra":"x","allow":true},"error":{"extra":1,"message":"m","code":"c"},"ok":false,"id":7}`,
	`{"id":7,"ok":true,"result":{"capabilities":{"x":true}},"": 1}`,
	// Whitespace.
	" \t\r\n{ \"id\" : 7 , \"ok\" :\ttrue , \"result\" : { \"value\" : \"v\" , \"version\" : 1 } } \r\n",
	`{"id": 7 ,"ok":true}`, `{"id":7,"ok":true}x`, `{"id":7,"ok":true}{}`, "{\"id\":7,\"ok\":true}\x00", "\xef\xbb\xbf{\"id\":7}",
	// Numbers at the edges.
	`{"id":7,"ok":true,"result":{"version":18446744073709551615}}`,
	`{"id":7,"ok":true,"result":{"version":18446744073709551616}}`,
	`{"id":7,"ok":true,"result":{"version":0}}`, `{"id":7,"ok":true,"result":{"version":00}}`,
	`{"id":7,"ok":true,"result":{"version":-1}}`, `{"id":7,"ok":true,"result":{"version":-0}}`,
	`{"id":7,"ok":true,"result":{"version":1.0}}`, `{"id":7,"ok":true,"result":{"version":1e2}}`,
	`{"id":7,"ok":true,"result":{"version":"1"}}`, `{"id":7,"ok":true,"result":{"version":null}}`,
	`{"id":7,"ok":true,"x":1.}`, `{"id":7,"ok":true,"x":.5}`, `{"id":7,"ok":true,"x":-}`, `{"id":7,"ok":true,"x":1e}`, `{"id":7,"ok":true,"x":1E+9}`,
	`{"id":7.0,"ok":true}`, `{"id":-7,"ok":true}`, `{"id":"7","ok":true}`, `{"id":null,"ok":true}`, `{"ok":true}`,
	`{"id":12345678901234567890123,"ok":true}`,
	// Times at the edges.
	`{"id":7,"ok":true,"result":{"created_at":"2024-02-29T23:59:59.999999999Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2023-02-29T00:00:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2000-02-29T00:00:00.000000000Z","updated_at":"1900-02-29T00:00:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"0000-01-01T00:00:00.000000000Z","updated_at":"9999-12-31T23:59:59.999999999Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T24:00:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:60:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:00:60.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-13-30T08:00:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-04-31T08:00:00.000000000Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:14:14Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:14:14.5+01:00"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30t08:14:14.381353202z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:14:14.38135320aZ"}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:14:14.381353202\u005a"}}`,
	`{"id":7,"ok":true,"result":{"created_at":""}}`, `{"id":7,"ok":true,"result":{"created_at":"","updated_at":""}}`,
	`{"id":7,"ok":true,"result":{"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z","rotated_at":"2026-11-30T08:14:14.381353203Z"}}`,
	`{"id":7,"ok":true,"result":{"created_at":null}}`, `{"id":7,"ok":true,"result":{"created_at":1}}`,
	// Nulls, types and duplicates.
	`{"id":7,"ok":null}`, `{"id":7,"ok":"true"}`, `{"id":7,"ok":1}`, `{"id":7,"ok":true,"result":null}`,
	`{"id":7,"ok":false,"error":null}`, `{"id":7,"ok":false}`, `{"id":7,"ok":false,"error":{}}`,
	`{"id":7,"ok":false,"error":{"code":null,"message":1}}`, `{"id":7,"ok":false,"error":"x"}`,
	`{"id":7,"ok":false,"error":{"code":"a"},"policy":null}`, `{"id":7,"ok":false,"error":{"code":"a"},"policy":{"obligations":null}}`,
	`{"id":7,"ok":false,"error":{"code":"a"},"policy":{"obligations":[null]}}`, `{"id":7,"ok":false,"error":{"code":"a"},"policy":{"obligations":[]}}`,
	`{"id":7,"ok":true,"result":{"value":null}}`, `{"id":7,"ok":true,"result":{"value":1}}`, `{"id":7,"ok":true,"result":{"ref":null}}`,
	`{"id":7,"ok":true,"result":{"created":1}}`, `{"id":7,"ok":true,"result":[]}`, `{"id":7,"ok":true,"result":"x"}`,
	`{"id":7,"id":7,"ok":true}`, `{"id":7,"ok":true,"ok":false}`, `{"id":7,"ok":true,"result":{"value":"a","value":"b"}}`,
	`{"id":7,"ok":true,"result":{"ref":"a"},"result":{"env":"b"}}`,
	// Not JSON, or not an object.
	``, `null`, `[]`, `7`, `"x"`, `{`, `{"id":7,`, `{"id":7,}`, `{"id":7 "ok":true}`, `{"id":7,"ok":tru}`, `{"id":7,"ok":true,"x":[1,]}`,
	`{"id":7,"ok":true,"x":{"a" 1}}`, `{"id":7,"ok":true,"x":{1:2}}`, `{'id':7}`, `{"id":7,"ok":true,"x":"unterminated}`,
	`{"id":7,"ok":true,"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	`{"id":7,"ok":true,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	// Errors with details, and the results of the uses.
	`{"id":7,"ok":false,"error":{"code":"upstream_failed","message":"m","details":{"cause":"dns"}}}`,
	`{"id":7,"ok":false,"error":{"code":"upstream_failed","details":{"extra":[1],"cause":"tls"},"message":"m"},"policy":{"allow":true}}`,
	`{"id":7,"ok":false,"error":{"code":"upstream_failed","message":"m","Details":{"CAUSE":"read"}}}`,
	`{"id":7,"ok":false,"error":{"code":"conflict","message":"m","details":{"current_version":3}}}`,
	`{"id":7,"ok":false,"error":{"code":"conflict","message":"m","details":{"current_version":-1}}}`,
	`{"id":7,"ok":false,"error":{"code":"c","message":"m","details":null}}`, `{"id":7,"ok":false,"error":{"code":"c","details":{"cause":1}}}`,
	`{"id":7,"ok":false,"error":{"code":"c","details":"x"}}`, `{"id":7,"ok":false,"error":{"code":"c","details":{}}}`,
	`{"id":7,"ok":true,"result":{"service":"echo","status":404,"headers":{"Content-Type":["text/plain"]},"body":"<redacted:app/token>","truncated":false,"redactions":[{"ref":"arca://app/token","count":1}],"elapsed_ms":3}}`,
	`{"id":7,"ok":true,"result":{"action":"hello","exit_code":1,"signal":"","stdout":"a","stderr":"b","truncated":{"stdout":true,"stderr":false},"redactions":[],"elapsed_ms":4}}`,
	`{"id":7,"ok":true,"result":{"base_urls":{"echo":"http://127.0.0.1:4000/echo"},"token":"t","expires_at":"2026-11-30T08:14:14.381353202Z"}}`,
	`{"id":7,"ok":true,"result":{"stopped":true}}`,
}

func TestDecodeEdgeCases(t *testing.T) {
	for _, line := range edgeLines {
		for _, want := range []string{"7", "8"} {
			if diff, _ := differAll([]byte(line), []byte(want)); diff != "" {
				t.Errorf("%q as a response to %s: %s", line, want, diff)
			}
		}
	}
}

// The fast path takes the common shapes, in another order and with added
// fields too: it is not a dead branch that always falls back.
func TestFastTakesCanonicalShapes(t *testing.T) {
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 22, 23, 24, 25} {
		if _, handled := differAll([]byte(edgeLines[i]), []byte("7")); len(handled) == 0 {
			t.Errorf("the fast path took none of %q", edgeLines[i])
		}
	}
}

// (c) the fuzz target: both paths agree on any line.
func FuzzDecode(f *testing.F) {
	for _, line := range realLines(f) {
		f.Add(line)
	}
	for _, line := range slices.Concat(edgeLines, policyLines) {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, want := range [][]byte{[]byte("7"), idOfAny(line)} {
			if diff, _ := differAll(line, want); diff != "" {
				t.Fatalf("%q as a response to %s: %s", line, want, diff)
			}
		}
	})
}

// idOfAny is the raw id of a line that starts as a canonical one, so the
// fuzzer reaches the paths past the id check; else "1".
func idOfAny(line []byte) []byte {
	rest, ok := bytes.CutPrefix(line, []byte(`{"id":`))
	if i := bytes.IndexByte(rest, ','); ok && i > 0 {
		return rest[:i]
	}
	return []byte("1")
}

// daysSinceEpoch agrees with package time on every day of years around
// the edges the fast path takes (0 to 9999).
func TestDaysSinceEpoch(t *testing.T) {
	for _, years := range [][2]int{{0, 3}, {1599, 1602}, {1899, 1901}, {1969, 1972}, {1999, 2001}, {2023, 2101}, {9997, 9999}} {
		for y := years[0]; y <= years[1]; y++ {
			for m := 1; m <= 12; m++ {
				for d := 1; d <= daysIn(m, y); d++ {
					want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400 // exact: midnight
					if got := daysSinceEpoch(y, m, d); got != want {
						t.Fatalf("%04d-%02d-%02d: %d days, package time says %d", y, m, d, got, want)
					}
				}
			}
		}
	}
}

// A conflict's details.current_version reaches Error.CurrentVersion.
func TestConflictCurrentVersion(t *testing.T) {
	var e Error
	if err := json.Unmarshal([]byte(`{"code":"conflict","message":"m","details":{"current_version":3}}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != "conflict" || e.CurrentVersion != 3 {
		t.Errorf("conflict decoded as %+v", e)
	}
}
