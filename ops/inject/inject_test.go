package inject

import (
	"context"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

func TestMaterializeResolvesAndAuditsEachSecret(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for ref, v := range map[string]string{"arca://app/db": canary + "-db", "arca://app/api": canary + "-api"} {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: ref, Value: secret(v)}); err != nil {
			t.Fatal(err)
		}
	}
	f.events.Reset()
	got, err := Materialize(ctx, f.svc, []Injection{
		{Name: "DB_PASSWORD", Ref: "arca://app/db"},
		{Name: "API", Ref: "arca://default/app/api"},
		{Name: "_again", Ref: "arca://app/db"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, value string }{{"DB_PASSWORD", canary + "-db"}, {"API", canary + "-api"}, {"_again", canary + "-db"}}
	if len(got) != len(want) {
		t.Fatalf("got %d secrets, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Name != w.name || string(got[i].Value.Reveal()) != w.value {
			t.Errorf("secret %d = %s=%q, want %s=%q", i, got[i].Name, got[i].Value.Reveal(), w.name, w.value)
		}
	}
	ev := f.lines(t)
	if len(ev) != 3 {
		t.Fatalf("%d audit events, want one per secret (3)", len(ev))
	}
	for i, ref := range []string{"app/db", "app/api", "app/db"} {
		e := ev[i]
		if e.Event != "get" || e.Outcome != audit.OK || e.Ref != ref || e.Env != "default" || e.Source != audit.SourceCLI {
			t.Errorf("event %d = %+v, want a cli get of %s", i, e, ref)
		}
	}
	if strings.Contains(f.events.String(), canary) {
		t.Fatal("an audit event carries a value")
	}
}

func TestMaterializeNothing(t *testing.T) {
	f := newFixture(t, "")
	got, err := Materialize(context.Background(), f.svc, nil)
	if err != nil || len(got) != 0 || f.events.Len() != 0 {
		t.Fatalf("Materialize(nil) = %v, %v with %d bytes of events", got, err, f.events.Len())
	}
}

// Names are checked before anything is read or audited: a typo in one
// name reads no secret at all.
func TestMaterializeRefusesBadNames(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/db", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	f.events.Reset()
	f.store.calls = 0
	for _, c := range []struct {
		name string
		ins  []Injection
		msg  string
	}{
		{"empty", []Injection{{Name: "", Ref: "arca://app/db"}}, "secret name is empty"},
		{"leading digit", []Injection{{Name: "1DB", Ref: "arca://app/db"}}, `"1DB" is not an environment variable name`},
		{"dash", []Injection{{Name: "DB-PASS", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"dot", []Injection{{Name: "db.pass", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"space", []Injection{{Name: "DB PASS", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"equals", []Injection{{Name: "A=B", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"semicolon", []Injection{{Name: "A;rm", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"newline", []Injection{{Name: "A\nB", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"non-ascii", []Injection{{Name: "ÄB", Ref: "arca://app/db"}}, "not an environment variable name"},
		{"reserved", []Injection{{Name: "ARCA_CONFIG", Ref: "arca://app/db"}}, "ARCA_* names are arca's own"},
		{"reserved other", []Injection{{Name: "ARCA_SOMETHING", Ref: "arca://app/db"}}, "ARCA_* names are arca's own"},
		{"duplicate", []Injection{{Name: "DB", Ref: "arca://app/db"}, {Name: "X", Ref: "arca://app/db"}, {Name: "DB", Ref: "arca://app/other"}}, "secret DB is given twice"},
		{"bad name after good ones", []Injection{{Name: "OK", Ref: "arca://app/db"}, {Name: "NOT-OK", Ref: "arca://app/db"}}, "not an environment variable name"},
	} {
		got, err := Materialize(ctx, f.svc, c.ins)
		if ops.CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), c.msg) || got != nil {
			t.Errorf("%s: %v, %v; want bad_request containing %q", c.name, got, err, c.msg)
		}
	}
	if f.events.Len() != 0 || f.store.calls != 0 {
		t.Fatalf("a refused name was audited (%q) or reached the vault (%d calls)", f.events.String(), f.store.calls)
	}
	for _, ok := range []string{"A", "_", "_1", "a_b_C9", "arca_lower", "ARCA"} {
		if !ValidVarName(ok) {
			t.Errorf("ValidVarName(%q) = false", ok)
		}
	}
}

// A malformed ref fails before any secret is read, audited as the bad
// request it is; the message names the variable and never the value.
func TestMaterializeBadRefReadsNothing(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/db", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{canary, "arca://", "arca://app", "arca://a/b/c/d", "ARCA://app/db", "arca://app/../db", "arca://app/db?x=1", " arca://app/db"} {
		f.events.Reset()
		f.store.calls = 0
		got, err := Materialize(ctx, f.svc, []Injection{{Name: "GOOD", Ref: "arca://app/db"}, {Name: "BAD", Ref: bad}, {Name: "LATER", Ref: "arca://app/db"}})
		if ops.CodeOf(err) != manifest.BadRequest || !strings.HasPrefix(err.Error(), "secret BAD: invalid ref") || got != nil {
			t.Errorf("ref %q: %v, %v; want bad_request starting %q", bad, got, err, "secret BAD: invalid ref")
			continue
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("ref %q: the message echoes it: %v", bad, err)
		}
		ev := f.lines(t)
		if f.store.calls != 0 || len(ev) != 1 || ev[0].Outcome != audit.BadRequest || ev[0].Op != "get" {
			t.Errorf("ref %q: %d vault calls, events %+v; want none and one bad_request get", bad, f.store.calls, ev)
		}
	}
}

// A 1Password reference where a ref was meant is told how to convert;
// nothing is read, the bad request is audited.
func TestMaterializeOnePasswordRef(t *testing.T) {
	f := newFixture(t, "")
	_, err := Materialize(context.Background(), f.svc, []Injection{{Name: "DB", Ref: "op://vault/db/password"}})
	want := `secret DB: invalid ref: must start with "arca://": a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)`
	if ops.CodeOf(err) != manifest.BadRequest || err == nil || err.Error() != want {
		t.Fatalf("err = %v, want bad_request %q", err, want)
	}
	if ev := f.lines(t); f.store != nil || len(ev) != 1 || ev[0].Outcome != audit.BadRequest {
		t.Fatalf("the vault was opened (%v), events %+v", f.store != nil, ev)
	}
}

func TestMaterializeFailuresKeepTheirCode(t *testing.T) {
	f := newFixture(t, `
[[guardrails.rule]]
ref = "billing/*"
ops = ["get"]
reason = "no billing reads"
`)
	ctx := context.Background()
	for _, ref := range []string{"arca://app/db", "arca://billing/card"} {
		if _, err := f.svc.Put(ctx, ops.Request{Ref: ref, Value: secret(canary)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/nul", Value: secret("a\x00b")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref  string
		code manifest.Code
		msg  string
	}{
		{"arca://app/missing", manifest.NotFound, `secret X: arca://app/missing not found in env "default"`},
		{"arca://billing/card", manifest.Denied, "secret X: denied by guardrail: no billing reads"},
		{"arca://staging/app/db", manifest.BadRequest, `secret X: unknown env "staging"`},
		{"arca://app/nul", manifest.BadRequest, "secret X: the value has a NUL byte"},
	} {
		got, err := Materialize(ctx, f.svc, []Injection{{Name: "OK", Ref: "arca://app/db"}, {Name: "X", Ref: c.ref}})
		if ops.CodeOf(err) != c.code || !strings.HasPrefix(err.Error(), c.msg) || got != nil {
			t.Errorf("%s: %v, %v; want %s starting %q", c.ref, got, err, c.code, c.msg)
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("%s: the message carries the value", c.ref)
		}
	}
}

// A variable that looks like a ref but is not one stops the run: it is
// never handed to a child as a half-ref.
func TestRefsInEnvironInvalidAreBadRequests(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for _, kv := range []string{"HALF=arca://", "UPPER=ARCA://app/db", "BROKEN=arca://a/b/c/d", "lower.case=arca://app/db"} {
		_, err := Materialize(ctx, f.svc, RefsInEnviron([]string{kv}))
		if ops.CodeOf(err) != manifest.BadRequest {
			t.Errorf("%s: %v, want bad_request", kv, err)
		}
	}
}

// TestMaterializeAuditsAValueItCannotPass: a value with a NUL byte was read
// (its get event says ok), so a second event records that it went no
// further.
func TestMaterializeAuditsAValueItCannotPass(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/nul", Value: secret("a\x00b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := Materialize(ctx, f.svc, []Injection{{Name: "X", Ref: "arca://app/nul"}}); ops.CodeOf(err) != manifest.BadRequest {
		t.Fatalf("err = %v, want bad_request", err)
	}
	ev := f.lines(t)
	last := ev[len(ev)-2:]
	if last[0].Event != "get" || last[0].Outcome != audit.OK ||
		last[1].Event != "error" || last[1].Op != "get" || last[1].Outcome != audit.BadRequest || last[1].Ref != "app/nul" || last[1].Env != "default" {
		t.Fatalf("last events = %+v; want the get, then an error event for the same ref", last)
	}
}

// No secret becomes a variable that the loader, the C library, a shell or
// a runtime reads when a program starts, whether asked for by --secret or
// found as a ref in arca's environment; nothing is read or audited.
func TestMaterializeRefusesStartupVariables(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	refused := map[string]string{
		"LD_PRELOAD": "the dynamic loader", "LD_LIBRARY_PATH": "the dynamic loader", "LD_AUDIT": "the dynamic loader",
		"LD_DEBUG_OUTPUT": "the dynamic loader", "LD_": "the dynamic loader", "DYLD_INSERT_LIBRARIES": "the dynamic loader",
		"DYLD_LIBRARY_PATH": "the dynamic loader",
		"GCONV_PATH":        "the C library", "GLIBC_TUNABLES": "the C library", "MALLOC_TRACE": "the C library",
		"MALLOC_CHECK_": "the C library", "NLSPATH": "the C library", "LOCPATH": "the C library", "TMPDIR": "the C library",
		"TZDIR": "the C library", "RES_OPTIONS": "the C library", "HOSTALIASES": "the C library",
		"LANG": "the C library", "LANGUAGE": "the C library", "LC_ALL": "the C library", "LC_CTYPE": "the C library",
		"BASH_ENV": "the shell", "ENV": "the shell", "SHELLOPTS": "the shell", "BASHOPTS": "the shell", "PS4": "the shell",
		"PS1": "the shell", "PROMPT_COMMAND": "the shell", "IFS": "the shell", "CDPATH": "the shell", "ZDOTDIR": "the shell",
		"BASH_XTRACEFD": "the shell",
		"PATH":          "every program that runs another by name",
		"NODE_OPTIONS":  "a language runtime", "PYTHONSTARTUP": "a language runtime", "PYTHONPATH": "a language runtime",
		"PYTHONWARNINGS": "a language runtime", "PYTHONIOENCODING": "a language runtime", "NODE_EXTRA_CA_CERTS": "a language runtime",
		"PERL5OPT": "a language runtime", "PERL5LIB": "a language runtime", "RUBYOPT": "a language runtime",
		"JAVA_TOOL_OPTIONS": "a language runtime", "_JAVA_OPTIONS": "a language runtime", "CLASSPATH": "a language runtime",
		"LUA_INIT": "a language runtime", "LUA_INIT_5_4": "a language runtime", "LUA_INIT_5_1": "a language runtime",
		"LUA_PATH_5_3": "a language runtime", "ERL_AFLAGS": "a language runtime", "ERL_FLAGS": "a language runtime",
		"ERL_ZFLAGS": "a language runtime", "DOTNET_STARTUP_HOOKS": "a language runtime",
		"CORECLR_PROFILER_PATH": "a language runtime", "CORECLR_PROFILER_PATH_64": "a language runtime",
		"PERL5DB": "a language runtime", "PHPRC": "a language runtime",
	}
	for name, who := range refused {
		want := "secret name " + name + ": " + who + " reads it when a program starts, so no secret is injected as it (use another name)"
		for _, ins := range [][]Injection{
			{{Name: "OK", Ref: "arca://app/db"}, {Name: name, Ref: "arca://app/db"}},
			Merge([]string{name + "=arca://app/db", "OK=arca://app/db"}, nil, nil),
		} {
			got, err := Materialize(ctx, f.svc, ins)
			if ops.CodeOf(err) != manifest.BadRequest || err.Error() != want || got != nil {
				t.Errorf("%s: %v, %v; want bad_request %q", name, got, err, want)
			}
		}
		if ValidVarName(name) {
			t.Errorf("ValidVarName(%q) = true", name)
		}
	}
	if f.events.Len() != 0 || f.store != nil {
		t.Fatalf("a refused name was audited (%q) or the vault was opened", f.events.String())
	}
	// Near misses, and the allowlisted variables a secret may replace.
	for _, ok := range []string{"LD", "LDX_PRELOAD", "ld_preload", "XLD_PRELOAD", "DYLD", "PATHS", "MY_PATH", "ENVIRONMENT", "PS5",
		"LC", "LANGS", "IFS_", "TZ", "HOME", "TERM", "USER", "LOGNAME", "SHELL", "NODE_ENV", "PYTHON", "DB_PASSWORD",
		"LUA", "LUA_INITX", "ERL", "DOTNET_ROOT", "PHP", "PERL5"} {
		if !ValidVarName(ok) {
			t.Errorf("ValidVarName(%q) = false", ok)
		}
	}
}
