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
		{"DB_PASSWORD", "arca://app/db"},
		{"PINNED", "arca://prod/app/db"},
		{"UPPER", "ARCA://app/db"},
		{"HALF", "arca://"},
		{"BROKEN", "arca://a/b/c/d"},
		{"lower.case", "arca://app/db"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RefsInEnviron =\n%q\nwant\n%q", got, want)
	}
	if got := RefsInEnviron(nil); len(got) != 0 {
		t.Fatalf("RefsInEnviron(nil) = %q", got)
	}
}

// A --secret takes the place of a same-named ref in the environment;
// the result is sorted by name whatever the order of either.
func TestMerge(t *testing.T) {
	environ := []string{"Z=arca://app/z", "PATH=/usr/bin", "DB=arca://app/env-db", "A=arca://app/a"}
	secrets := []Injection{{"DB", "arca://app/flag-db"}, {"B", "arca://app/b"}}
	got := Merge(environ, secrets)
	want := []Injection{{"A", "arca://app/a"}, {"B", "arca://app/b"}, {"DB", "arca://app/flag-db"}, {"Z", "arca://app/z"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge =\n%q\nwant\n%q", got, want)
	}
	if got := Merge(nil, nil); len(got) != 0 {
		t.Fatalf("Merge(nil, nil) = %q", got)
	}
}

// With nothing allowlisted in arca's environment, the child's environment
// is the secrets alone: never nil, which os/exec would read as "inherit
// all of arca's".
func TestChildEnvNeverFallsBackToArcas(t *testing.T) {
	parent := []string{"AWS_SECRET_ACCESS_KEY=x", "ARCA_ENV=prod", "TZ=UTC", "HOME=/h"}
	if env := ChildEnv(parent[:2], nil); env == nil || len(env) != 0 {
		t.Fatalf("ChildEnv = %#v, want an empty, non-nil environment", env)
	}
	vars := []Materialized{{Name: "TZ", Value: vault.NewSecret([]byte("Europe/Paris"))}, {Name: "K", Value: vault.NewSecret([]byte("v"))}}
	got := ChildEnv(parent, vars)
	want := []string{"HOME=/h", "TZ=Europe/Paris", "K=v"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ChildEnv = %q, want %q", got, want)
	}
}
