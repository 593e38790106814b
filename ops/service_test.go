package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
	"github.com/arca-secrets/arca/vault/identity"
)

const canary = "CANARY-value-5e1d9b"

// fixture is a Service on a fresh embedded file vault, auditing to events.
type fixture struct {
	svc    *Service
	events *bytes.Buffer
	sink   *failingWriter
	store  *spyStore
	// reserve, when set, makes every group a vault.Reserver whose
	// Reserve returns what it returns; trail then records what reaches
	// the groups ("reserve a: app/one app/two", "add a: app/one",
	// "commit a", "abort a"; a is the vault's name).
	reserve func(names []string) error
	trail   []string
	// groupCap, when set, is how many writes a group takes before it
	// answers vault.ErrCommitFirst ("full a" on the trail).
	groupCap int
}

// failingWriter fails every write once fail is set.
type failingWriter struct {
	buf  *bytes.Buffer
	fail bool
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.fail {
		return 0, errors.New("stderr is gone")
	}
	return w.buf.Write(p)
}

// spyStore counts calls and can make a commit fail after approval, or
// List forget what is there.
type spyStore struct {
	vault.Store
	name       string
	f          *fixture
	calls      int
	failCommit bool
	hideList   bool
}

func (s *spyStore) Recipients(ctx context.Context) ([]string, error) {
	return s.Store.(vault.Keyed).Recipients(ctx)
}

func (s *spyStore) SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error {
	return s.Store.(vault.Keyed).SetRecipients(ctx, from, rs)
}

func (s *spyStore) Rekey(ctx context.Context) (int, error) { return s.Store.(vault.Keyed).Rekey(ctx) }

func (s *spyStore) List(ctx context.Context) ([]vault.Meta, error) {
	if s.hideList {
		return []vault.Meta{}, nil
	}
	return s.Store.List(ctx)
}

func (s *spyStore) ApplyBatch(ctx context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	s.calls++
	if s.failCommit {
		ms := make([]vault.Meta, b.Len())
		for i := range ms {
			ms[i] = vault.Meta{Name: b.At(i).Name, Version: 7, Created: true}
		}
		if err := approve(ms); err != nil {
			return 0, err
		}
		return 0, errors.New("disk full")
	}
	return s.Store.ApplyBatch(ctx, b, approve)
}

func (s *spyStore) Get(ctx context.Context, name string) (vault.Record, error) {
	s.calls++
	return s.Store.Get(ctx, name)
}

func (s *spyStore) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	s.calls++
	if s.failCommit {
		if err := approve(vault.Meta{Name: w.Name, Version: 7}); err != nil {
			return vault.Meta{}, err
		}
		return vault.Meta{}, errors.New("disk full")
	}
	return s.Store.Apply(ctx, w, approve)
}

// Group is the store's own, counted and failed as Apply is.
func (s *spyStore) Group(ctx context.Context) (vault.Group, error) {
	g, err := s.Store.Group(ctx)
	if err != nil {
		return nil, err
	}
	sg := &spyGroup{Group: g, s: s}
	if s.f.reserve != nil {
		return &reservingGroup{sg}, nil
	}
	return sg, nil
}

type spyGroup struct {
	vault.Group
	s    *spyStore
	adds int
}

func (g *spyGroup) Add(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	g.s.calls++
	if g.s.f.groupCap > 0 && g.adds == g.s.f.groupCap {
		g.s.note("full " + g.s.name)
		return vault.Meta{}, vault.ErrCommitFirst
	}
	g.adds++
	g.s.note("add " + g.s.name + ": " + w.Name)
	if g.s.failCommit {
		m := vault.Meta{Name: w.Name, Version: 7}
		return m, approve(m)
	}
	return g.Group.Add(ctx, w, approve)
}

func (g *spyGroup) Commit(ctx context.Context) error {
	g.s.note("commit " + g.s.name)
	if g.s.failCommit {
		g.Group.Abort()
		return errors.New("disk full")
	}
	return g.Group.Commit(ctx)
}

func newFixture(t testing.TB, toml string) *fixture {
	t.Helper()
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	cfg, err := ParseConfig([]byte(toml), "arca.toml", getenv)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{events: &bytes.Buffer{}}
	f.sink = &failingWriter{buf: f.events}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }
	f.svc = New(Options{Config: cfg, Audit: audit.NewWriter(f.sink, audit.SourceCLI, clock), Now: clock,
		Backends: spyBackends{f}})
	t.Cleanup(func() { f.svc.Close() })
	for _, env := range cfg.EnvNames() {
		makeVault(t, f.svc, env)
	}
	return f
}

func (g *spyGroup) Abort() {
	g.s.note("abort " + g.s.name)
	g.Group.Abort()
}

// reservingGroup is a spyGroup that is a vault.Reserver.
type reservingGroup struct{ *spyGroup }

func (g *reservingGroup) Reserve(_ context.Context, names []string) error {
	g.s.note("reserve " + g.s.name + ": " + strings.Join(names, " "))
	return g.s.f.reserve(names)
}

// note adds what reached a group to the trail, when one is kept.
func (s *spyStore) note(what string) {
	if s.f.reserve != nil {
		s.f.trail = append(s.f.trail, what)
	}
}

// makeVault makes the identity and the vault behind env, as arca init does
// (ops/access, which does it, imports ops).
func makeVault(t testing.TB, s *Service, env string) {
	t.Helper()
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		t.Fatal(err)
	}
	own, _, err := identity.Ensure(vc.Identity, s.Now())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ParseRecipients("recipients", append([]string{own}, vc.Recipients...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateVault(context.Background(), name, vc, rs); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) lines(t *testing.T) []audit.Event {
	t.Helper()
	var out []audit.Event
	for _, l := range strings.Split(strings.TrimSpace(f.events.String()), "\n") {
		if l == "" {
			continue
		}
		var e audit.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func secret(s string) vault.Secret { return vault.NewSecret([]byte(s)) }

func TestGetWithholdsValueWhenAuditFails(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	f.sink.fail = true
	res, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"})
	if !errors.Is(err, ErrAudit) || CodeOf(err) != manifest.OpError {
		t.Fatalf("err = %v, want op_error wrapping ErrAudit", err)
	}
	if res.Value.Len() != 0 {
		t.Fatal("a value was returned although its event was not written")
	}
}

func TestChangeNotCommittedWhenAuditFails(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret("v1")}); err != nil {
		t.Fatal(err)
	}
	f.sink.fail = true
	for name, op := range map[string]func() error{
		"put": func() error { _, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret("v2")}); return err },
		"rotate": func() error {
			_, err := f.svc.Rotate(ctx, Request{Ref: "arca://app/db", Value: secret("v2")})
			return err
		},
		"rm":     func() error { _, err := f.svc.Rm(ctx, Request{Ref: "arca://app/db"}); return err },
		"create": func() error { _, err := f.svc.Put(ctx, Request{Ref: "arca://app/new", Value: secret("v")}); return err },
	} {
		if err := op(); !errors.Is(err, ErrAudit) {
			t.Errorf("%s: err = %v, want ErrAudit", name, err)
		}
	}
	f.sink.fail = false
	got, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"})
	if err != nil || string(got.Value.Reveal()) != "v1" || got.Version != 1 {
		t.Fatalf("after unaudited changes: version %d, err %v; want v1 at version 1", got.Version, err)
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/new"}); CodeOf(err) != manifest.NotFound {
		t.Fatalf("unaudited create landed: %v", err)
	}
}

func TestFailedCommitIsAuditedTwice(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.List(ctx, Request{}); err != nil { // opens the store
		t.Fatal(err)
	}
	f.store.failCommit = true
	id := json.RawMessage(`{"n":1}`)
	_, err := f.svc.Put(ctx, Request{ID: id, Ref: "arca://app/db", Value: secret("v")})
	if CodeOf(err) != manifest.OpError {
		t.Fatalf("err = %v, want op_error", err)
	}
	ev := f.lines(t)[1:]
	if len(ev) != 2 || ev[0].Outcome != audit.OK || ev[1].Outcome != audit.Error ||
		string(ev[0].ID) != string(id) || string(ev[1].ID) != string(id) {
		t.Fatalf("events = %+v; want ok then error, both with id %s", ev, id)
	}
}

func TestOneEventPerOpAndNoValue(t *testing.T) {
	f := newFixture(t, `
[[guardrails.rule]]
ref = "billing/*"
ops = ["get"]
reason = "no billing reads"
`)
	ctx := context.Background()
	att := "attestation-" + canary
	reqs := []func() error{
		func() error {
			_, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret(canary), Attestation: att})
			return err
		},
		func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://app/db", Actor: "agent:x"}); return err },
		func() error {
			_, err := f.svc.Rotate(ctx, Request{Ref: "arca://app/db", Value: secret(canary + "2")})
			return err
		},
		func() error { _, err := f.svc.List(ctx, Request{}); return err },
		func() error { _, err := f.svc.Check(ctx, Request{}); return err },
		func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://app/missing"}); return err },
		func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://billing/stripe"}); return err },
		func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://../x"}); return err },
		func() error {
			_, err := f.svc.Put(ctx, Request{Ref: "arca://app/db", Value: secret(canary), Actor: "bad\x00actor"})
			return err
		},
		func() error { _, err := f.svc.Rm(ctx, Request{Ref: "arca://app/db"}); return err },
	}
	for _, r := range reqs {
		_ = r()
	}
	ev := f.lines(t)
	if len(ev) != len(reqs) {
		t.Fatalf("%d events for %d ops", len(ev), len(reqs))
	}
	for i, e := range ev {
		if e.Seq != uint64(i+1) || e.Source != audit.SourceCLI || e.V != 1 {
			t.Errorf("event %d: seq %d source %q v %d", i, e.Seq, e.Source, e.V)
		}
	}
	wantOutcomes := []string{"ok", "ok", "ok", "ok", "ok", "not_found", "denied", "bad_request", "bad_request", "ok"}
	for i, w := range wantOutcomes {
		if ev[i].Outcome != w {
			t.Errorf("event %d (%s): outcome %q, want %q", i, ev[i].Op, ev[i].Outcome, w)
		}
	}
	if ev[0].AttestationSHA256 != audit.HashAttestation(att) || ev[1].Actor != "agent:x" || ev[6].Event != "denied" {
		t.Errorf("attestation hash, actor or denied event wrong: %+v %+v %+v", ev[0], ev[1], ev[6])
	}
	if strings.Contains(f.events.String(), canary) {
		t.Fatal("the audit wire carries a value or an attestation")
	}
}

func TestDoomedRequestsNeverReachTheVault(t *testing.T) {
	f := newFixture(t, `
[[guardrails.rule]]
ref = "billing/*"
reason = "billing is off limits"
`)
	ctx := context.Background()
	if _, err := f.svc.List(ctx, Request{}); err != nil {
		t.Fatal(err)
	}
	f.store.calls = 0
	big := strings.Repeat("x", manifest.MaxValue+1)
	cases := []struct {
		name string
		run  func() error
		code manifest.Code
		msg  string
	}{
		{"bad ref", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://a//b"}); return err }, manifest.BadRequest, "invalid ref"},
		{"unknown env", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://a/b", Env: "prod"}); return err }, manifest.BadRequest, `unknown env "prod"`},
		{"unknown pinned env", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://prod/a/b"}); return err }, manifest.BadRequest, `unknown env "prod"`},
		{"value over cap", func() error { _, err := f.svc.Put(ctx, Request{Ref: "arca://a/b", Value: secret(big)}); return err }, manifest.BadRequest, "65536"},
		{"value not utf-8", func() error { _, err := f.svc.Put(ctx, Request{Ref: "arca://a/b", Value: secret("\xff")}); return err }, manifest.BadRequest, "UTF-8"},
		{"actor over cap", func() error {
			_, err := f.svc.Get(ctx, Request{Ref: "arca://a/b", Actor: strings.Repeat("a", 257)})
			return err
		}, manifest.BadRequest, "256"},
		{"actor control", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://a/b", Actor: "a\nb"}); return err }, manifest.BadRequest, "control"},
		{"attestation over cap", func() error {
			_, err := f.svc.Get(ctx, Request{Ref: "arca://a/b", Attestation: strings.Repeat("a", manifest.MaxAttestation+1)})
			return err
		}, manifest.BadRequest, "65536"},
		{"guardrail", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://billing/stripe"}); return err }, manifest.Denied, "denied by guardrail: billing is off limits"},
		{"guardrail on put", func() error {
			_, err := f.svc.Put(ctx, Request{Ref: "arca://billing/x", Value: secret("v")})
			return err
		}, manifest.Denied, "denied by guardrail"},
		{"ref on list", func() error { _, err := f.svc.List(ctx, Request{Ref: "arca://a/b"}); return err }, manifest.BadRequest, `takes no field "ref"`},
		{"value on get", func() error { _, err := f.svc.Get(ctx, Request{Ref: "arca://a/b", Value: secret("v")}); return err }, manifest.BadRequest, `takes no field "value"`},
	}
	for _, c := range cases {
		err := c.run()
		if CodeOf(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %s containing %q", c.name, err, c.code, c.msg)
		}
	}
	if f.store.calls != 0 {
		t.Fatalf("doomed requests reached the vault %d times", f.store.calls)
	}
}

func TestEnvRoutingAndResults(t *testing.T) {
	f := newFixture(t, `
default_env = "dev"
[envs.dev]
vault = "d"
[envs.prod]
vault = "p"
[vaults.d]
kind = "file"
[vaults.p]
kind = "file"
`)
	ctx := context.Background()
	put, err := f.svc.Put(ctx, Request{Ref: "arca://prod/app/db", Env: "dev", Value: secret("p1")})
	if err != nil || put.Env != "prod" || put.Ref != "arca://app/db" || !put.Created || put.Version != 1 {
		t.Fatalf("pinned put = %+v, %v", put, err)
	}
	if _, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"}); CodeOf(err) != manifest.NotFound {
		t.Fatalf("value written to prod is visible in dev: %v", err)
	}
	got, err := f.svc.Get(ctx, Request{Ref: "arca://app/db", Env: "prod"})
	if err != nil || string(got.Value.Reveal()) != "p1" || got.CreatedAt.String() != "2026-01-02T03:04:05.000000006Z" || !got.RotatedAt.IsZero() {
		t.Fatalf("get prod = %+v, %v", got, err)
	}
	rot, err := f.svc.Rotate(ctx, Request{Ref: "arca://prod/app/db", Value: secret("p2")})
	if err != nil || rot.Version != 2 || rot.RotatedAt.IsZero() {
		t.Fatalf("rotate = %+v, %v", rot, err)
	}
	rm, err := f.svc.Rm(ctx, Request{Ref: "arca://prod/app/db"})
	if err != nil || !rm.Removed || rm.Version != 2 {
		t.Fatalf("rm = %+v, %v", rm, err)
	}
	if _, err := f.svc.Rotate(ctx, Request{Ref: "arca://prod/app/db", Value: secret("x")}); CodeOf(err) != manifest.NotFound {
		t.Fatalf("rotate of a removed ref: %v", err)
	}
	chk, err := f.svc.Check(ctx, Request{Env: "prod"})
	if err != nil || !chk.Healthy || chk.Vault != "p" || chk.Kind != KindFile || chk.Records != 0 {
		t.Fatalf("check = %+v, %v", chk, err)
	}
}

func TestListTruncates(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.List(ctx, Request{}); err != nil {
		t.Fatal(err)
	}
	f.svc.stores["default"] = manyStore{f.store, manifest.MaxListRows + 3}
	clear(f.svc.byEnv)
	res, err := f.svc.List(ctx, Request{})
	if err != nil || !res.Truncated || res.Omitted != 3 || len(res.Records) != manifest.MaxListRows {
		t.Fatalf("list: truncated %v omitted %d rows %d err %v", res.Truncated, res.Omitted, len(res.Records), err)
	}
}

type manyStore struct {
	vault.Store
	n int
}

func (m manyStore) List(context.Context) ([]vault.Meta, error) {
	out := make([]vault.Meta, m.n)
	for i := range out {
		out[i] = vault.Meta{Name: filepath.Join("ns", strings.Repeat("a", 1+i%100)), Version: 1}
	}
	return out, nil
}

// spyBackends opens file vaults only (ops/backend, which has every kind,
// imports ops) and keeps the store it opened in the fixture.
type spyBackends struct{ f *fixture }

func (b spyBackends) Open(name string, vc VaultConfig, now func() time.Time) (vault.Store, error) {
	st, err := file.Open(vc.Path, vc.Identity, now)
	if err != nil {
		return nil, err
	}
	b.f.store = &spyStore{Store: st, name: name, f: b.f}
	return b.f.store, nil
}

func (spyBackends) Create(_ context.Context, _ string, vc VaultConfig, rs []age.Recipient) (bool, error) {
	return file.Create(vc.Path, rs)
}

func (spyBackends) Problems(vc VaultConfig) []string {
	return file.PermissionProblems(vc.Path, vc.Identity)
}

// A Service given no Backends opens no vault: every vault op is op_error,
// audited, and init cannot make the vault.
func TestNoBackends(t *testing.T) {
	home := t.TempDir()
	cfg, err := ParseConfig([]byte(""), "arca.toml", func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	var events bytes.Buffer
	svc := New(Options{Config: cfg, Audit: audit.NewWriter(&events, audit.SourceCLI, nil)})
	defer svc.Close()
	_, err = svc.Get(context.Background(), Request{Ref: "arca://app/db"})
	if CodeOf(err) != manifest.OpError || !strings.Contains(err.Error(), "is not available in this build") {
		t.Fatalf("Get: %v", err)
	}
	if !strings.Contains(events.String(), `"outcome":"error"`) {
		t.Errorf("the failed get was not audited: %s", events.String())
	}
	name, vc, err := cfg.VaultFor("default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateVault(context.Background(), name, vc, nil); err == nil || !strings.Contains(err.Error(), "is not available in this build") {
		t.Fatalf("CreateVault: %v", err)
	}
}

// TestMetaNeedsNoEnv: with envs configured and none of them the default,
// meta-ops are answered whatever env they name; their events record the
// env only when it is configured. Vault ops still need one.
func TestMetaNeedsNoEnv(t *testing.T) {
	f := newFixture(t, "[envs.prod]\nvault = \"prod\"\n\n[vaults.prod]\nkind = \"file\"\n")
	ctx := context.Background()
	for _, c := range []struct{ op, env, want string }{
		{"manifest", "", ""},
		{"shutdown", "", ""},
		{"manifest", "prod", "prod"},
		{"shutdown", "staging", ""},
		{"manifest", "../x", ""},
	} {
		f.events.Reset()
		spec, _ := manifest.Op(c.op)
		env, err := f.svc.Meta(ctx, spec, Request{ID: []byte(`7`), Env: c.env, Actor: "orchestrator"})
		if err != nil || env != c.want {
			t.Errorf("%s with env %q: env %q, err %v; want %q, nil", c.op, c.env, env, err, c.want)
		}
		ev := f.lines(t)
		if len(ev) != 1 || ev[0].Event != c.op || ev[0].Outcome != audit.OK || ev[0].Env != c.want || ev[0].Actor != "orchestrator" {
			t.Errorf("%s with env %q: events %+v", c.op, c.env, ev)
		}
	}
	spec, _ := manifest.Op("manifest")
	_, err := f.svc.Meta(ctx, spec, Request{Actor: "a\x07"})
	if CodeOf(err) != manifest.BadRequest {
		t.Errorf("a meta-op with a bad actor: err %v, want bad_request", err)
	}
	if _, err := f.svc.List(ctx, Request{}); CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), `unknown env "default"`) {
		t.Errorf("list naming no env: err %v, want bad_request unknown env", err)
	}
}

// TestCancelledDecisionIsNotDegraded: allow_on_error lets an op run when
// the PDP fails, not when the caller cancelled the decision (serve
// stopping): that op is pdp_unreachable and never reaches the vault.
func TestCancelledDecisionIsNotDegraded(t *testing.T) {
	f := newFixture(t, "[serve.pdp]\nexec = \"sleep 30\"\nallow_on_error = true\ntimeout_ms = 30000\n")
	environ := []string{"PATH=" + os.Getenv("PATH")}
	f.svc.decider = pdp.New(pdp.Config{Exec: "sleep 30", Timeout: 30 * time.Second, Environ: environ})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.svc.Get(ctx, Request{Ref: "arca://app/db"})
	if CodeOf(err) != manifest.PDPUnreachable || PolicyOf(err) != nil {
		t.Fatalf("err = %v (policy %+v), want pdp_unreachable without a verdict", err, PolicyOf(err))
	}
	if f.store != nil && f.store.calls != 0 {
		t.Errorf("a cancelled decision reached the vault: %d calls", f.store.calls)
	}
	// Not cancelled, the same PDP failing runs the op degraded.
	f.svc.decider = pdp.New(pdp.Config{Exec: "exit 3", Timeout: 30 * time.Second, Environ: environ})
	if _, err := f.svc.Get(context.Background(), Request{Ref: "arca://app/db"}); CodeOf(err) != manifest.NotFound || PolicyOf(err) == nil || !PolicyOf(err).Degraded {
		t.Errorf("err = %v (policy %+v), want not_found with a degraded verdict", err, PolicyOf(err))
	}
}
