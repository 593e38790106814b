package pdp

import (
	"context"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	quick = 5 * time.Second        // timeout for a PDP expected to answer
	short = 300 * time.Millisecond // timeout for a PDP expected to hang
)

// gate answers from the request on stdin: allow get, deny anything else.
const gate = `if grep -q '"op":"get"'; then echo '{"allow":true,"reason":"get is fine"}'; ` +
	`else echo '{"allow":false,"reason":"only get"}'; fi`

// pad prints a valid allow padded with spaces to n bytes in all.
func pad(n int) string {
	return `printf '{"allow":true}'; head -c ` + strconv.Itoa(n-len(`{"allow":true}`)) + ` /dev/zero | tr '\0' ' '`
}

type row struct {
	name    string
	exec    string
	req     Request       // zero: getReq
	timeout time.Duration // zero: quick
	shell   string        // zero: "sh"
	want    *Verdict      // nil: unreachable
	why     string        // phrase the Why must contain when unreachable
}

var getReq = Request{Actor: "agent:ci", Op: "get", Env: "prod", Ref: "ns/name"}

// bigReq carries a 64 KiB attestation: larger than a pipe buffer.
func bigReq() Request {
	r := getReq
	r.Attestation = strings.Repeat("a", 64<<10)
	return r
}

func allow(reason string, obligations ...string) *Verdict {
	return &Verdict{Allow: true, Reason: reason, Obligations: obligations}
}

func deny(reason string) *Verdict { return &Verdict{Allow: false, Reason: reason} }

// rows lists every way a PDP can answer, fail or lie.
func rows() []row {
	putReq := getReq
	putReq.Op = "put"
	return []row{
		// Honest answers.
		{name: "allows with reason and obligations", exec: `echo '{"allow":true,"reason":"ok","obligations":["log","mfa"]}'`,
			want: allow("ok", "log", "mfa")},
		{name: "denies with a reason", exec: `echo '{"allow":false,"reason":"not on weekends"}'`,
			want: deny("not on weekends")},
		{name: "unknown and miscased keys are ignored", exec: `echo '{"Allow":false,"allow":true,"extra":{"n":[1,null]}}'`,
			want: allow("")},
		{name: "whitespace around the verdict", exec: `printf ' \n{"allow":true}\n \t\n'`, want: allow("")},
		{name: "reads stdin and allows get", exec: gate, want: allow("get is fine")},
		{name: "reads stdin and denies put", exec: gate, req: putReq, want: deny("only get")},
		{name: "never reads a 64 KiB request", exec: `sleep 0.1; echo '{"allow":true}'`, req: bigReq(), want: allow("")},
		{name: "reads 10 bytes of a 64 KiB request", exec: `head -c 10 >/dev/null; echo '{"allow":true}'`, req: bigReq(),
			want: allow("")},
		{name: "verdict exactly at the cap", exec: pad(MaxVerdict), want: allow("")},
		{name: "floods stderr", exec: `head -c 1048576 /dev/zero >&2; echo '{"allow":true}'`, want: allow("")},
		{name: "stderr is /dev/null", exec: `if [ "$(readlink /proc/$$/fd/2)" = /dev/null ]; then echo '{"allow":true}'; ` +
			`else echo '{"allow":false}'; fi`, want: allow("")},
		{name: "allows and leaves a background grandchild", exec: `sleep 30 >/dev/null 2>&1 & echo '{"allow":true}'`,
			want: allow("")},

		// Hangs: the deadline decides.
		{name: "hangs", exec: `sleep 30`, timeout: short, why: "timed out after 300ms"},
		{name: "exits silently while a grandchild holds stdout", exec: `sleep 30 &`, timeout: short, why: "timed out"},
		{name: "allows, exits 0, a grandchild holds stdout", exec: `echo '{"allow":true}'; sleep 30 &`, timeout: short,
			why: "timed out"},
		{name: "allows, closes stdout, keeps running", exec: `echo '{"allow":true}'; exec >&-; sleep 30`, timeout: short,
			why: "timed out"},
		{name: "a grandchild leaves the group holding stdout", exec: `setsid sleep 2 &`, timeout: short, why: "timed out"},
		{name: "never reads a 64 KiB request and hangs", exec: `sleep 30`, req: bigReq(), timeout: short, why: "timed out"},

		// Floods: killed at the cap.
		{name: "floods stdout with yes", exec: `yes`, why: "verdict larger than 65536 bytes"},
		{name: "floods stdout with 70000 bytes", exec: `head -c 70000 /dev/zero`, why: "verdict larger than 65536 bytes"},
		{name: "verdict one byte over the cap", exec: pad(MaxVerdict + 1), why: "verdict larger than 65536 bytes"},

		// Exits.
		{name: "exits non-zero after printing allow", exec: `echo '{"allow":true}'; exit 3`, why: "exited with status 3"},
		{name: "command not found", exec: `arca-no-such-pdp-command`, why: "exited with status 127"},
		{name: "kills itself after printing allow", exec: `echo '{"allow":true}'; kill -9 $$`, why: "killed by signal 9"},
		{name: "shell cannot start", exec: `echo '{"allow":true}'`, shell: "/nonexistent/sh", why: "cannot start"},

		// Lies and garbage.
		{name: "prints nothing", exec: `true`, why: "verdict is empty"},
		{name: "prints garbage", exec: `echo 'allow: yes'`, why: "verdict is not JSON"},
		{name: "prints a truncated object", exec: `printf '{"allow":true'`, why: "verdict is not JSON"},
		{name: "prints two JSON objects", exec: `echo '{"allow":false}{"allow":true}'`, why: "verdict has data after the JSON object"},
		{name: "prints two JSON lines", exec: `echo '{"allow":false}'; echo '{"allow":true}'`,
			why: "verdict has data after the JSON object"},
		{name: "prints an array", exec: `echo '[{"allow":true}]'`, why: "verdict is not a JSON object"},
		{name: "allow as a string", exec: `echo '{"allow":"true"}'`, why: "verdict has no boolean allow"},
		{name: "allow as a number", exec: `echo '{"allow":1}'`, why: "verdict has no boolean allow"},
		{name: "allow null", exec: `echo '{"allow":null}'`, why: "verdict has no boolean allow"},
		{name: "no allow", exec: `echo '{"reason":"trust me"}'`, why: "verdict has no boolean allow"},
		{name: "allow twice", exec: `echo '{"allow":false,"allow":true}'`, why: "verdict repeats key allow"},
		{name: "reason not a string", exec: `echo '{"allow":true,"reason":["ok"]}'`, why: "verdict reason is not a string"},
		{name: "obligations not an array", exec: `echo '{"allow":true,"obligations":"log"}'`,
			why: "verdict obligations is not an array of strings"},
		{name: "obligations hold a number", exec: `echo '{"allow":true,"obligations":["log",1]}'`,
			why: "verdict obligations is not an array of strings"},
	}
}

func TestDecideRows(t *testing.T) {
	for _, r := range rows() {
		t.Run(r.name, func(t *testing.T) { r.check(t) })
	}
}

// check runs the row alone, so it can also bound allocations and
// goroutines.
func (r row) check(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	o := r.checkOutcome(t)
	if o.alloc >= 1<<20 {
		t.Errorf("Decide allocated %d bytes, want < 1 MiB", o.alloc)
	}
	wantGoroutinesBack(t, goroutines)
}

// checkOutcome runs the row's decision and checks its verdict or Why, that
// it ended within its timeout plus margin, and that its process group is
// gone.
func (r row) checkOutcome(t *testing.T) outcome {
	if r.req.Op == "" {
		r.req = getReq
	}
	if r.timeout == 0 {
		r.timeout = quick
	}
	if r.shell == "" {
		r.shell = "sh"
	}
	cfg := Config{Exec: r.exec, Timeout: r.timeout, Environ: testEnviron()}
	o := decideMeasured(context.Background(), cfg, r.req, r.shell)
	t.Logf("elapsed %v, allocated %d bytes", o.elapsed, o.alloc)

	if r.want != nil {
		if o.err != nil {
			t.Fatalf("err = %v, want %+v", o.err, *r.want)
		}
		if !reflect.DeepEqual(o.v, *r.want) {
			t.Fatalf("verdict = %+v, want %+v", o.v, *r.want)
		}
	} else {
		wantUnreachable(t, o.err, r.why)
		if !reflect.DeepEqual(o.v, Verdict{}) {
			t.Errorf("unreachable decision returned verdict %+v", o.v)
		}
	}
	if o.elapsed >= r.timeout+margin {
		t.Errorf("Decide took %v with a %v timeout", o.elapsed, r.timeout)
	}
	if r.shell == "sh" {
		wantGroupGone(t, o.pgid)
	}
	return o
}
