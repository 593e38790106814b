package glob

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "a", true},
		{"*", "a/b/c", true},
		{"*", "", true},
		{"a*", "a", true},
		{"a*", "ab/c", true},
		{"a*", "ba", false},
		{"*a", "b/a", true},
		{"*a", "b/ab", false},
		{"a*b*c", "a/x/b/y/c", true},
		{"a*b*c", "a/x/b/y/c/d", false},
		{"a**b", "a/b", true},
		{"*/*", "a/b", true},
		{"*/*", "ab", false},
		{"billing/*", "billing/a/b", true},
		{"billing/*", "billing.x/y", false},
		{"?", "/", true},
		{"?", "é", true},
		{"?", "ab", false},
		{"a?c", "a/c", true},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a-c]", "d", true},
		{"[!a-c]", "b", false},
		{"[^a-c]", "d", true},
		{"[!a-c]", "/", true},
		{"[-.]", "-", true},
		{"[a-]", "-", true},
		{"[a-]", "b", false},
		{"[é-ë]", "ê", true},
		{"agent:*", "agent:ci/job-42", true},
		{"agent:*", "agent", false},
		{"exact", "exact", true},
		{"exact", "Exact", false},
		{"exact", "exactly", false},
		{"", "", true},
		{"", "a", false},
		{"*x", strings.Repeat("a", 1000), false},
		{strings.Repeat("*a", 20) + "b", strings.Repeat("a", 1000), false},
	}
	for _, tc := range tests {
		if got := Match(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// A malformed pattern is refused with a reason; matching one (a Config
// that skipped validation) fails closed.
func TestProblem(t *testing.T) {
	tests := []struct{ pattern, problem string }{
		{"a[", "[ without ]"},
		{"a[bc", "[ without ]"},
		{"[!", "[ without ]"},
		{"[]", "empty class []"},
		{"[]a]", "empty class []"},
		{"[!]", "empty class []"},
		{"a]", "] without ["},
		{`a\*`, `\ is not allowed (there are no escapes)`},
		{`a\`, `\ is not allowed (there are no escapes)`},
		{"[a[]", "[ inside a class"},
		{`[a\]`, `\ inside a class`},
		{"[z-a]", "range z-a runs from high to low"},
		{"[a-[]", "[ inside a class"},
		{"a\xff", "not valid UTF-8"},
	}
	for _, tc := range tests {
		if got := Problem(tc.pattern); got != tc.problem {
			t.Errorf("Problem(%q) = %q, want %q", tc.pattern, got, tc.problem)
		}
		if !Match(tc.pattern, "anything") {
			t.Errorf("malformed %q does not match: a rule holding it would not fail closed", tc.pattern)
		}
	}
	for _, ok := range []string{"", "*", "?", "[a]", "[!a]", "[^a]", "[a-z]", "[-]", "[a-]", "[-a]", "a-b", "x!y^z"} {
		if p := Problem(ok); p != "" {
			t.Errorf("Problem(%q) = %q, want none", ok, p)
		}
	}
}

// globRegexp is the glob language written as a regular expression, to
// check the matcher against.
func globRegexp(pattern string) (*regexp.Regexp, bool) {
	if Problem(pattern) != "" {
		return nil, false
	}
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := i + 1
			b.WriteString("[")
			if pattern[j] == '!' || pattern[j] == '^' {
				b.WriteString("^")
				j++
			}
			end := j + 1 + strings.IndexByte(pattern[j+1:], ']')
			for _, c := range pattern[j:end] {
				if c == '-' {
					b.WriteString("-")
				} else {
					b.WriteString(regexp.QuoteMeta(string(c)))
				}
			}
			b.WriteString("]")
			n = end + 1 - i
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		i += n
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	return re, err == nil
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"agent:*", "agent:ci/job-42"}, {"a*b?c", "a/xb/c"}, {"[!a-c]*", "d/e"}, {"*a*a*", "aaa"},
		{"[-a]x", "-x"}, {"[a-]", "-"}, {"??", "é/"}, {"b*/*", "billing/a/b"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(s) {
			return
		}
		re, ok := globRegexp(pattern)
		if !ok {
			return
		}
		if got, want := Match(pattern, s), re.MatchString(s); got != want {
			t.Fatalf("Match(%q, %q) = %v, the regexp %s says %v", pattern, s, got, re, want)
		}
	})
}

// A long actor against a pattern of many stars stays linear per star.
func BenchmarkMatchManyStars(b *testing.B) {
	pattern := strings.Repeat("*a", 32) + "b"
	s := strings.Repeat("a", 256)
	for b.Loop() {
		Match(pattern, s)
	}
}

// BenchmarkMatch is one guardrail field matched, as every request that
// reaches the guardrails pays per rule: it allocates nothing.
func BenchmarkMatch(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if !Match("agent:ci/[a-z]*-job-*", "agent:ci/deploy-job-42") {
			b.Fatal("no match")
		}
	}
}
