package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/serve"
)

// fillN is how many secrets BenchmarkServeFill puts.
const fillN = 10_000

// fillInput is fillN put lines of distinct refs, pipelined in one write.
func fillInput() []byte {
	var b bytes.Buffer
	for i := range fillN {
		fmt.Fprintf(&b, `{"id":%d,"op":"put","ref":"arca://fill/secret-%05d","value":"value-%05d-0123456789abcdef0123456789"}`+"\n", i, i, i)
	}
	return b.Bytes()
}

// okCounter counts the success responses written to it, a line each.
type okCounter struct {
	n    int
	line []byte // the part of a line not yet ended
}

func (c *okCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			break
		}
		c.line = append(c.line, p[:i]...)
		if bytes.Contains(c.line, []byte(`"ok":true`)) {
			c.n++
		}
		c.line, p = c.line[:0], p[i+1:]
	}
	return n, nil
}

// BenchmarkServeFill fills an empty vault with 10,000 secrets through one
// serve session, the client writing every put without waiting and then
// closing stdin: one iteration is one whole fill into a fresh vault. In
// process, grouped (the default) beside group=1 (every write committed on
// its own, as serve did before group commit); over a real process, this
// tree's binary beside the binary named by $ARCA_BASELINE (for instance
// one built from main), when set.
func BenchmarkServeFill(b *testing.B) {
	in := fillInput()
	for _, g := range []struct {
		name string
		max  int
	}{{"grouped", 0}, {"group=1", 1}} {
		b.Run("inprocess/"+g.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				cfg := freshHome(b)
				b.StartTimer()
				inR, inW := io.Pipe()
				go func() {
					inW.Write(in)
					inW.Close()
				}()
				var out okCounter
				err := serve.Serve(context.Background(), serve.Options{Stdin: inR, Stdout: &out, Stderr: io.Discard,
					Config: cfg, Backends: backend.Kinds{}, MaxGroup: g.max})
				if err != nil || out.n != fillN {
					b.Fatalf("serve: %v, %d of %d puts ok", err, out.n, fillN)
				}
			}
			b.ReportMetric(float64(fillN)*float64(b.N)/b.Elapsed().Seconds(), "puts/s")
		})
	}
	bins := build(b)
	procs := []struct{ name, path string }{{"arca", bins.arca}}
	if base := os.Getenv("ARCA_BASELINE"); base != "" {
		procs = append(procs, struct{ name, path string }{"baseline", base})
	}
	for _, p := range procs {
		b.Run("process/"+p.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				home := b.TempDir()
				env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
				initCmd := exec.Command(p.path, "init")
				initCmd.Env = env
				if out, err := initCmd.CombinedOutput(); err != nil {
					b.Fatalf("arca init: %v\n%s", err, out)
				}
				b.StartTimer()
				cmd := exec.Command(p.path, "serve")
				cmd.Env, cmd.Stdin, cmd.Stderr = env, bytes.NewReader(in), io.Discard
				var out okCounter
				cmd.Stdout = &out
				if err := cmd.Run(); err != nil || out.n != fillN {
					b.Fatalf("arca serve: %v, %d of %d puts ok", err, out.n, fillN)
				}
			}
			b.ReportMetric(float64(fillN)*float64(b.N)/b.Elapsed().Seconds(), "puts/s")
		})
	}
}

// freshHome is a config on a new HOME with its default vault created.
func freshHome(b *testing.B) *ops.Config {
	home := b.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	cfg, err := ops.ParseConfig(nil, "arca.toml", getenv)
	if err != nil {
		b.Fatal(err)
	}
	svc := ops.New(ops.Options{Config: cfg, Backends: backend.Kinds{}, Audit: audit.NewWriter(io.Discard, audit.SourceCLI, nil)})
	defer svc.Close()
	if _, err := access.Init(svc, ""); err != nil {
		b.Fatal(err)
	}
	return cfg
}
