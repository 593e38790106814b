package inject

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

func TestRefsInEnviron(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin",
		"DB_PASSWORD=arca://app/db",
		"PINNED=arca://prod/app/db",
		"URL=https://example.com/arca://x/y",
		"EMBEDDED=x arca://app/db",
		"SPACED= arca://app/db",
		"UPPER=ARCA://app/db",
		"HALF=arca://",
		"BROKEN=arca://a/b/c/d",
		"ARCA_ENV=arca://app/db",
		"ARCA_SOMETHING_CANARY=arca://app/db",
		"NOEQUALS",
		"DB_PASSWORD=arca://app/second",
		"EMPTY=",
		"lower.case=arca://app/db",
	}
	got := RefsInEnviron(environ)
	want := []Injection{
		{Name: "DB_PASSWORD", Ref: "arca://app/db"},
		{Name: "PINNED", Ref: "arca://prod/app/db"},
		{Name: "UPPER", Ref: "ARCA://app/db"},
		{Name: "HALF", Ref: "arca://"},
		{Name: "BROKEN", Ref: "arca://a/b/c/d"},
		{Name: "lower.case", Ref: "arca://app/db"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RefsInEnviron =\n%+v\nwant\n%+v", got, want)
	}
	if got := RefsInEnviron(nil); len(got) != 0 {
		t.Fatalf("RefsInEnviron(nil) = %+v", got)
	}
}

// A --secret takes the place of a same-named ref in the environment;
// the result is sorted by name whatever the order of either.
func TestMerge(t *testing.T) {
	environ := []string{"Z=arca://app/z", "PATH=/usr/bin", "DB=arca://app/env-db", "A=arca://app/a"}
	secrets := []Injection{{Name: "DB", Ref: "arca://app/flag-db"}, {Name: "B", Ref: "arca://app/b"}}
	got := Merge(environ, nil, secrets)
	want := []Injection{{Name: "A", Ref: "arca://app/a"}, {Name: "B", Ref: "arca://app/b"}, {Name: "DB", Ref: "arca://app/flag-db"}, {Name: "Z", Ref: "arca://app/z"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge =\n%+v\nwant\n%+v", got, want)
	}
	if got := Merge(nil, nil, nil); len(got) != 0 {
		t.Fatalf("Merge(nil, nil, nil) = %+v", got)
	}
}

// With nothing allowlisted in arca's environment, the child's environment
// is the secrets alone: never nil, which os/exec would read as "inherit
// all of arca's".
func TestChildEnvNeverFallsBackToArcas(t *testing.T) {
	parent := []string{"AWS_SECRET_ACCESS_KEY=x", "ARCA_ENV=prod", "TZ=UTC", "HOME=/h"}
	if env := ChildEnv(parent[:2], nil, nil); env == nil || len(env) != 0 {
		t.Fatalf("ChildEnv = %#v, want an empty, non-nil environment", env)
	}
	vars := []Materialized{{Name: "TZ", Value: vault.NewSecret([]byte("Europe/Paris"))}, {Name: "K", Value: vault.NewSecret([]byte("v"))}}
	got := ChildEnv(parent, nil, vars)
	want := []string{"HOME=/h", "TZ=Europe/Paris", "K=v"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ChildEnv = %q, want %q", got, want)
	}
}
