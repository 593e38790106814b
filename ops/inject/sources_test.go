package inject

import (
	"context"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// A literal is taken as written, neither read nor audited; a secret's get
// event says where its value goes; a file may hold a NUL byte.
func TestMaterializeLiteralsFilesAndDest(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for ref, v := range map[string]string{"arca://app/db": canary, "arca://app/nul": "a\x00" + canary} {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: ref, Value: secret(v)}); err != nil {
			t.Fatal(err)
		}
	}
	f.events.Reset()
	got, err := Materialize(ctx, f.svc, []Injection{
		{Name: "DB", Ref: "arca://app/db"},
		{Name: "KEY", Ref: "arca://app/nul", File: true},
		{Name: "PORT", Literal: true, Value: "8443", Where: "a.env: line 1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Materialized{
		{Name: "DB", Value: secret(canary)},
		{Name: "KEY", Value: secret("a\x00" + canary), File: true},
		{Name: "PORT", Value: secret("8443"), Literal: true},
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || string(g.Value.Reveal()) != string(w.Value.Reveal()) || g.File != w.File || g.Literal != w.Literal {
			t.Errorf("variable %d = %s %q file %v literal %v, want %+v", i, g.Name, g.Value.Reveal(), g.File, g.Literal, w)
		}
	}
	ev := f.lines(t)
	if len(ev) != 2 || ev[0].Message != "to DB" || ev[1].Message != "to a file for KEY" || ev[1].Outcome != audit.OK {
		t.Fatalf("events %+v, want two ok gets, to DB and to a file for KEY", ev)
	}
	if strings.Contains(f.events.String(), canary) || strings.Contains(f.events.String(), "8443") {
		t.Fatal("an audit event carries a value")
	}
}

// A failure of an env file's entry names the file and the line.
func TestMaterializeNamesTheEnvFileLine(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for _, c := range []struct {
		in   Injection
		code manifest.Code
		msg  string
	}{
		{Injection{Name: "X", Ref: "arca://app/nope", Where: "a.env: line 3"}, manifest.NotFound, `a.env: line 3: secret X: arca://app/nope not found in env "default"`},
		{Injection{Name: "X", Ref: "arca://app/../x", Where: "a.env: line 4"}, manifest.BadRequest, "a.env: line 4: secret X: invalid ref: "},
		{Injection{Name: "LD_PRELOAD", Literal: true, Value: "x", Where: "a.env: line 5"}, manifest.BadRequest, "a.env: line 5: secret name LD_PRELOAD: the dynamic loader"},
		{Injection{Name: "N", Literal: true, Value: "a\x00b", Where: "a.env: line 6"}, manifest.BadRequest, "a.env: line 6: N: the value has a NUL byte"},
	} {
		got, err := Materialize(ctx, f.svc, []Injection{c.in})
		if ops.CodeOf(err) != c.code || !strings.HasPrefix(err.Error(), c.msg) || got != nil {
			t.Errorf("%+v: %v, %v; want %s starting %q", c.in, got, err, c.code, c.msg)
		}
	}
}

// arca env prints literals with the secrets, and never a file.
func TestFormatEnvLiteralsAndFiles(t *testing.T) {
	var out strings.Builder
	vars := []Materialized{{Name: "DB", Value: secret("v")}, {Name: "PORT", Value: secret("8443"), Literal: true}}
	if err := FormatEnv(&out, "dotenv", vars); err != nil || out.String() != "DB=\"v\"\nPORT=\"8443\"\n" {
		t.Fatalf("FormatEnv = %q, %v", out.String(), err)
	}
	out.Reset()
	err := FormatEnv(&out, "sh", append(vars, Materialized{Name: "K", Value: secret(canary), File: true}))
	if ops.CodeOf(err) != manifest.BadRequest || out.Len() != 0 || strings.Contains(err.Error(), canary) {
		t.Fatalf("FormatEnv of a file: %q, %v; want bad_request and nothing written", out.String(), err)
	}
}
