package bench

import (
	"context"
	"io"

	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/serve"
	"github.com/arca-secrets/arca/vault"
)

// BenchmarkServeInProcess runs the serve loop without pipes or processes:
// the cost of one get through decode, ops, the vault and both encoders.
func BenchmarkServeInProcess(b *testing.B) {
	o := opstest.New(b, opstest.Options{})
	if _, err := o.Service.Put(context.Background(), ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte("s3cret-value-of-some-length-0123456789"))}); err != nil {
		b.Fatal(err)
	}
	o.Service.Close() // serve opens the vault itself
	cfg := o.Config

	in := strings.Repeat(getLine, b.N)
	b.ResetTimer()
	err := serve.Serve(context.Background(), serve.Options{Stdin: strings.NewReader(in), Stdout: io.Discard, Stderr: io.Discard, Config: cfg, Backends: backend.Kinds{}})
	if err != nil {
		b.Fatal(err)
	}
}
