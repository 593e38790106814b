package ref

import (
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

func TestParseGood(t *testing.T) {
	seg128 := strings.Repeat("a", 128)
	tests := []struct {
		name, in        string
		want            Ref
		path, canonical string
	}{
		{"two segments", "arca://billing/stripe-key", Ref{NS: "billing", Name: "stripe-key"}, "billing/stripe-key", "arca://billing/stripe-key"},
		{"env pin", "arca://prod/billing/stripe-key", Ref{Env: "prod", NS: "billing", Name: "stripe-key"}, "billing/stripe-key", "arca://billing/stripe-key"},
		{"all allowed characters", "arca://A1._-/z9.Z_-", Ref{NS: "A1._-", Name: "z9.Z_-"}, "A1._-/z9.Z_-", "arca://A1._-/z9.Z_-"},
		{"digit first", "arca://0/1", Ref{NS: "0", Name: "1"}, "0/1", "arca://0/1"},
		{"dots inside", "arca://a..b/c.d", Ref{NS: "a..b", Name: "c.d"}, "a..b/c.d", "arca://a..b/c.d"},
		{"128-char segment", "arca://" + seg128 + "/x", Ref{NS: seg128, Name: "x"}, seg128 + "/x", "arca://" + seg128 + "/x"},
		{"128-char pin", "arca://" + seg128 + "/a/b", Ref{Env: seg128, NS: "a", Name: "b"}, "a/b", "arca://a/b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.Env != tc.want.Env || got.NS != tc.want.NS || got.Name != tc.want.Name {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if got.Path() != tc.path {
				t.Errorf("Path() = %q, want %q", got.Path(), tc.path)
			}
			if got.Canonical() != tc.canonical {
				t.Errorf("Canonical() = %q, want %q", got.Canonical(), tc.canonical)
			}
		})
	}
}

func TestParseHostile(t *testing.T) {
	seg129 := strings.Repeat("a", 129)
	tests := []struct {
		name, in, msg string
	}{
		{"empty", "", `must start with "arca://"`},
		{"missing scheme", "billing/key", `must start with "arca://"`},
		{"single slash scheme", "arca:/billing/key", `must start with "arca://"`},
		{"other scheme", "https://billing/key", `must start with "arca://"`},
		{"upper-case scheme", "ARCA://billing/key", "scheme must be lower-case"},
		{"mixed-case scheme", "Arca://billing/key", "scheme must be lower-case"},
		{"scheme only", "arca://", "1 segment, want ns/name or env/ns/name"},
		{"one segment", "arca://billing", "1 segment,"},
		{"four segments", "arca://a/b/c/d", "4 segments,"},
		{"many slashes", "arca://" + strings.Repeat("a/", 300) + "a", "301 segments,"},
		{"empty middle segment", "arca://a//b", "segment 2 (ns) is empty"},
		{"trailing slash", "arca://a/b/", "segment 3 (name) is empty"},
		{"leading slash", "arca:///a/b", "segment 1 (env) is empty"},
		{"empty name", "arca://a/", "segment 2 (name) is empty"},
		{"empty ns", "arca:///b", "segment 1 (ns) is empty"},
		{"dot-dot ns", "arca://../b", "segment 1 (ns) must start with a letter or digit"},
		{"dot-dot name", "arca://a/..", "segment 2 (name) must start with a letter or digit"},
		{"dot-dot pin", "arca://../a/b", "segment 1 (env) must start with a letter or digit"},
		{"dot-leading", "arca://a/.hidden", "segment 2 (name) must start with a letter or digit"},
		{"dash-leading", "arca://-a/b", "must start with a letter or digit"},
		{"underscore-leading", "arca://a/_b", "must start with a letter or digit"},
		{"percent escape", "arca://a/b%2Fc", `character outside [A-Za-z0-9._-]: '%'`},
		{"percent-encoded dot-dot", "arca://%2e%2e/b", `character outside [A-Za-z0-9._-]: '%'`},
		{"query", "arca://a/b?x=1", `character outside [A-Za-z0-9._-]: '?'`},
		{"fragment", "arca://a/b#frag", `character outside [A-Za-z0-9._-]: '#'`},
		{"userinfo", "arca://user@a/b", `character outside [A-Za-z0-9._-]: '@'`},
		{"port-like colon", "arca://a:1/b", `character outside [A-Za-z0-9._-]: ':'`},
		{"space", "arca://a/b c", `character outside [A-Za-z0-9._-]: ' '`},
		{"leading space", " arca://a/b", `must start with "arca://"`},
		{"trailing newline", "arca://a/b\n", "segment 2 (name) has a control character"},
		{"tab", "arca://a\t/b", "segment 1 (ns) has a control character"},
		{"NUL", "arca://a/b\x00", "has a control character"},
		{"DEL", "arca://a/b\x7f", "has a control character"},
		{"escape sequence", "arca://a/\x1b[31mred", "has a control character"},
		{"latin accent", "arca://a/café", "has a non-ASCII character"},
		{"fullwidth letters", "arca://ａ/b", "segment 1 (ns) has a non-ASCII character"},
		{"fullwidth solidus", "arca://a／b", "1 segment,"},
		{"invalid UTF-8", "arca://a/\xff", "has a non-ASCII character"},
		{"backslash", `arca://a\b/c`, `character outside [A-Za-z0-9._-]: '\\'`},
		{"quote", `arca://a'/c`, `character outside [A-Za-z0-9._-]: '\''`},
		{"129-char segment", "arca://a/" + seg129, "segment 2 (name) is longer than 128 characters"},
		{"129-char pin", "arca://" + seg129 + "/a/b", "segment 1 (env) is longer than 128 characters"},
		{"over 1 KiB", "arca://a/" + strings.Repeat("b", manifest.MaxRef), "longer than 1024 bytes"},
		{"over 1 KiB of garbage", strings.Repeat("\x00", manifest.MaxRef+1), "longer than 1024 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", got)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "invalid ref: ") || !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q, want it to contain %q", msg, tc.msg)
			}
			if len(tc.in) > len(Scheme)+1 && strings.Contains(msg, tc.in) {
				t.Fatalf("message %q echoes the ref", msg)
			}
			if got != (Ref{}) {
				t.Fatalf("got %+v with an error, want the zero Ref", got)
			}
		})
	}
}

func TestParseCapCheckedFirst(t *testing.T) {
	// Exactly the cap is parsed; one byte more is refused before parsing.
	atCap := "arca://a/" + strings.Repeat("b", manifest.MaxRef-len("arca://a/"))
	_, err := Parse(atCap)
	if err == nil || !strings.Contains(err.Error(), "longer than 128 characters") {
		t.Fatalf("at the cap: err = %v, want the segment-length error", err)
	}
	_, err = Parse(atCap + "b")
	if err == nil || !strings.Contains(err.Error(), "longer than 1024 bytes") {
		t.Fatalf("over the cap: err = %v, want the cap error", err)
	}
}

func TestValidSegment(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"default", true},
		{"a", true},
		{"9", true},
		{"a.b_c-d", true},
		{strings.Repeat("x", 128), true},
		{strings.Repeat("x", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"-a", false},
		{"_a", false},
		{"a/b", false},
		{"a b", false},
		{"é", false},
		{"a\x00", false},
	}
	for _, tc := range tests {
		if got := ValidSegment(tc.in); got != tc.want {
			t.Errorf("ValidSegment(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
