package config

import (
	"slices"
	"testing"
)

func TestEnvNames(t *testing.T) {
	c, err := Parse([]byte("[vaults.v]\nkind = \"file\"\n[envs.b]\nvault = \"v\"\n[envs.a]\nvault = \"v\"\n[envs.c]\nvault = \"v\"\n"), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	names := c.EnvNames()
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("EnvNames() = %v", names)
	}
	names[0] = "mutated"
	if got := c.EnvNames(); got[0] != "a" {
		t.Fatalf("EnvNames() shares its slice: %v", got)
	}
	if got := (&Config{}).EnvNames(); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("zero Config EnvNames() = %v", got)
	}
}

func TestOriginString(t *testing.T) {
	for o, want := range map[Origin]string{
		OriginNone: "none", OriginPinned: "pinned", OriginImplicit: "implicit", OriginUser: "user", Origin(42): "unknown",
	} {
		if got := o.String(); got != want {
			t.Errorf("Origin(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
