package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// canary is a secret value the fixture stores: no response may hold it.
const canary = "CANARY-ui-7f3a9c"

const testToken = "test-token-0123456789abcdef"

// fixture is a Server over a real service on a fresh file vault, its
// audit file in a temp home, holding a few records (the canary in each
// value: app/db's two versions, app/old's two, removed) and a trail with
// ok, denied and error events.
type fixture struct {
	svc       *ops.Service
	server    *Server
	http      *httptest.Server
	auditFile string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{auditFile: filepath.Join(t.TempDir(), "audit.log")}
	af, err := audit.OpenFile(f.auditFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { af.Close() })
	fx := opstest.New(t, opstest.Options{Audit: af, Who: audit.Who{User: "ana", Host: "laptop"}, Config: `
[[guardrails.rule]]
env = "default"
ref = "billing/*"
ops = ["get"]
reason = "billing is read by the payments service only"
`})
	f.svc = fx.Service
	// The page's own service, as arca ui makes it: its events are the
	// page's (source ui), in the same audit file and chain.
	page := fx.NewService(t, opstest.Options{Audit: af, Who: audit.Who{User: "ana", Host: "laptop"}, Source: audit.SourceUI})
	ctx := context.Background()
	for _, kv := range [][2]string{{"app/db", canary}, {"app/api-token", "tok-" + canary}, {"billing/card", canary + "-card"}} {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://" + kv[0], Value: vault.NewSecret([]byte(kv[1]))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Rotate(ctx, ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte(canary + "-2"))}); err != nil {
		t.Fatal(err)
	}
	// app/old: two versions, then removed (soft-deleted, kept).
	for _, v := range []string{canary + "-old1", canary + "-old2"} {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/old", Value: vault.NewSecret([]byte(v))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Rm(ctx, ops.Request{Ref: "arca://app/old"}); err != nil {
		t.Fatal(err)
	}
	f.svc.Get(ctx, ops.Request{Ref: "arca://billing/card", Actor: "agent-7"}) // denied
	f.svc.Get(ctx, ops.Request{Ref: "arca://app/missing"})                    // not found
	if f.server, err = New(Options{Token: testToken, Vaults: access.Service{Service: page}, Envs: []string{"default"}, AuditFiles: []string{f.auditFile},
		Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.server)
	t.Cleanup(f.http.Close)
	return f
}

// noCanary fails if b holds the canary in any of its forms (plain, hex,
// base64 at any offset). TestNoCanaryCatchesALeak is its positive control.
func noCanary(t testing.TB, what string, b []byte) {
	t.Helper()
	for _, c := range vaulttest.Forms(canary) {
		if strings.Contains(string(b), c) {
			t.Fatalf("%s holds the secret value (as %q)", what, c)
		}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
