package pdp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRequestOnStdin captures what the child reads on stdin, byte for byte.
func TestRequestOnStdin(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"get with everything", Request{Actor: "agent:ci", Attestation: "att<&>é", Op: "get", Env: "prod", Ref: "ns/name"},
			`{"actor":"agent:ci","attestation":"att<&>é","op":"get","env":"prod","ref":"ns/name"}` + "\n"},
		{"list without actor, attestation or ref", Request{Op: "list", Env: "dev"},
			`{"op":"list","env":"dev"}` + "\n"},
		{"put with an actor only", Request{Actor: "a\"b", Op: "put", Env: "prod", Ref: "ns/x"},
			`{"actor":"a\"b","op":"put","env":"prod","ref":"ns/x"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "req")
			cfg := Config{Exec: "cat > " + sq(file) + `; echo '{"allow":true}'`, Timeout: quick, Environ: testEnviron()}
			if _, err := Decide(context.Background(), cfg, tt.req); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("stdin = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

func TestCancelEndsTheDecision(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg := Config{Exec: `sleep 30 & sleep 30`, Timeout: time.Minute, Environ: testEnviron()}
	o := decideMeasured(ctx, cfg, getReq, "sh")
	wantUnreachable(t, o.err, "cancelled")
	if o.elapsed >= 200*time.Millisecond+margin {
		t.Errorf("Decide took %v after a 200ms cancel", o.elapsed)
	}
	wantGroupGone(t, o.pgid)
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Exec: `echo '{"allow":true}'`, Timeout: quick, Environ: testEnviron()}
	_, pgid, err := decide(ctx, cfg, getReq, "sh")
	wantUnreachable(t, err, "cancelled: context canceled")
	if pgid != 0 {
		t.Errorf("a child started (pgid %d) for a cancelled context", pgid)
	}
}

func TestTimeoutMustBePositive(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		cfg := Config{Exec: `echo '{"allow":true}'`, Timeout: d, Environ: testEnviron()}
		_, pgid, err := decide(context.Background(), cfg, getReq, "sh")
		wantUnreachable(t, err, "timeout must be positive")
		if pgid != 0 {
			t.Errorf("timeout %v: a child started", d)
		}
	}
}

// TestDecideDoesNotCache: a PDP that allows once and then denies is asked
// each time.
func TestDecideDoesNotCache(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	cfg := Config{
		Exec: "echo x >> " + sq(count) + "; if [ $(wc -l < " + sq(count) + `) = 1 ]; then echo '{"allow":true}'; ` +
			`else echo '{"allow":false}'; fi`,
		Timeout: quick, Environ: testEnviron(),
	}
	for i, want := range []bool{true, false, false} {
		v, err := Decide(context.Background(), cfg, getReq)
		if err != nil || v.Allow != want {
			t.Fatalf("call %d: verdict %+v, err %v; want allow=%v", i, v, err, want)
		}
	}
}

func TestUnreachableError(t *testing.T) {
	var err error = &Unreachable{Why: "timed out after 5s"}
	if err.Error() != "pdp unreachable: timed out after 5s" {
		t.Errorf("Error() = %q", err.Error())
	}
	var u *Unreachable
	if !errors.As(err, &u) || u.Why != "timed out after 5s" {
		t.Errorf("errors.As lost the Why")
	}
}
