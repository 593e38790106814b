package action

import (
	"bytes"
	"fmt"
	"testing"
)

// TestOutputCapped: each stream is kept up to the cap, never buffered past
// it; the rest is read and counted. Both streams filling at once cannot
// block each other.
func TestOutputCapped(t *testing.T) {
	const mib, cap64k = 1 << 20, 64 << 10
	tests := []struct {
		name, script       string
		limit              int
		stdout, stderr     int // bytes kept
		truncOut, truncErr bool
		bytesOut           int64
	}{
		{"stdout past the cap", "head -c 1048576 /dev/zero", cap64k, cap64k, 0, true, false, mib},
		{"stderr past the cap", "head -c 1048576 /dev/zero >&2", cap64k, 0, cap64k, false, true, mib},
		{"stderr fills first", "head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero", cap64k, cap64k, cap64k, true, true, 2 * mib},
		{"exactly the cap", "head -c 65536 /dev/zero", cap64k, cap64k, 0, false, false, cap64k},
		{"a cap of zero", "echo out; echo err >&2", 0, 0, 0, true, true, 8},
		{"under the cap", "echo out; echo err >&2", cap64k, 4, 4, false, false, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := shAction(tt.script)
			cfg.MaxOutputBytes = tt.limit
			res := run(t, cfg, nil, baseEnv())
			if len(res.Stdout) != tt.stdout || len(res.Stderr) != tt.stderr {
				t.Errorf("kept %d bytes of stdout, %d of stderr; want %d, %d", len(res.Stdout), len(res.Stderr), tt.stdout, tt.stderr)
			}
			if cap(res.Stdout) > tt.limit || cap(res.Stderr) > tt.limit {
				t.Errorf("buffers of %d and %d bytes past the cap %d", cap(res.Stdout), cap(res.Stderr), tt.limit)
			}
			if res.Truncated.Stdout != tt.truncOut || res.Truncated.Stderr != tt.truncErr {
				t.Errorf("truncated %+v, want {%v %v}", res.Truncated, tt.truncOut, tt.truncErr)
			}
			if res.BytesOut != tt.bytesOut {
				t.Errorf("BytesOut %d, want %d", res.BytesOut, tt.bytesOut)
			}
			if res.ExitCode != 0 {
				t.Errorf("exit %d, want 0", res.ExitCode)
			}
		})
	}
}

// TestOutputKeptInOrder: what is kept is the start of the stream, byte for
// byte.
func TestOutputKeptInOrder(t *testing.T) {
	cfg := shAction("i=0; while [ $i -lt 2000 ]; do printf '%05d\\n' $i; i=$((i+1)); done")
	cfg.MaxOutputBytes = 6000
	res := run(t, cfg, nil, baseEnv())
	var want bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&want, "%05d\n", i)
	}
	if !bytes.Equal(res.Stdout, want.Bytes()) {
		t.Fatalf("kept %q..., want the first 1000 lines", res.Stdout[:min(len(res.Stdout), 40)])
	}
	if !res.Truncated.Stdout || res.BytesOut != 12000 {
		t.Fatalf("truncated %v, BytesOut %d; want true, 12000", res.Truncated.Stdout, res.BytesOut)
	}
}

// TestExitStatus: the exit code, or the signal that ended the child.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		name, script string
		code         int
		signal       string
	}{
		{"success", "exit 0", 0, ""},
		{"failure", "exit 7", 7, ""},
		{"its own signal", "kill -TERM $$", -1, "SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, shAction(tt.script), nil, baseEnv())
			if res.ExitCode != tt.code || res.Signal != tt.signal || res.TimedOut {
				t.Fatalf("exit %d, signal %q, timed out %v; want %d, %q, false", res.ExitCode, res.Signal, res.TimedOut, tt.code, tt.signal)
			}
		})
	}
}
