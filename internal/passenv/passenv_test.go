package passenv

import (
	"os"
	"strings"
	"testing"
)

// Each rule that wins over a pass, and the patterns it lets through.
func TestProblem(t *testing.T) {
	for _, tc := range []struct {
		pattern, rule string // rule "" means accepted
	}{
		{"NODE_ENV", ""},
		{"CI", ""},
		{"GITHUB_*", ""},
		{"KUBECONFIG", ""},
		{"AWS_PROFILE", ""},           // a cloud name, named exactly
		{"AWS_SECRET_ACCESS_KEY", ""}, // idem
		{"GITHUB_TOKEN", ""},
		{"PATH", ""},   // allowlisted already
		{"LC_ALL", ""}, // idem
		{"LC_*", ""},   // every name it matches is allowlisted: passed anyway
		{"LC_T*", ""},
		{"L*", ""}, // matches LD_*: skipped, not refused
		{"PYTHON*", ""},
		{"A*", ""},
		{"*", "rule: no bare *"},
		{"ARCA_CONFIG", "rule: ARCA_* names"},
		{"ARCA_*", "rule: ARCA_* names"},
		{"LD_PRELOAD", "rule: start-up variables"},
		{"LD_*", "rule: start-up variables"},
		{"LD_PRE*", "rule: start-up variables"},
		{"PYTHONPATH", "rule: start-up variables"},
		{"PYTHONX*", "rule: start-up variables"},
		{"NODE_OPTIONS", "rule: start-up variables"},
		{"BASH_ENV", "rule: start-up variables"},
		{"AWS_*", "rule: cloud credentials"},
		{"AZURE_CLIENT*", "rule: cloud credentials"},
		{"", "not a variable name"},
		{"1A", "not a variable name"},
		{"A-B", "not a variable name"},
		{"A B", "not a variable name"},
		{"A**", "not a variable name"},
		{"*A", "not a variable name"},
		{"A=B", "not a variable name"},
		{strings.Repeat("A", MaxPatternLen), ""},
		{strings.Repeat("A", MaxPatternLen+1), "at most 128"},
	} {
		got := Problem(tc.pattern)
		if tc.rule == "" && got != "" || tc.rule != "" && !strings.Contains(got, tc.rule) {
			t.Errorf("Problem(%q) = %q, want %q", tc.pattern, got, tc.rule)
		}
	}
}

// An odd pattern is quoted: nothing unprintable reaches a terminal.
func TestProblemQuotesOddPatterns(t *testing.T) {
	got := Problem("A\x1b[2J")
	if strings.ContainsRune(got, 0x1b) || !strings.Contains(got, `"A\x1b[2J"`) {
		t.Fatalf("Problem = %q", got)
	}
}

func TestSelect(t *testing.T) {
	environ := []string{
		"NODE_ENV=production", "CI=true", "GITHUB_SHA=abc", "GITHUB_TOKEN=tok", "GITHUB_REF=main",
		"AWS_PROFILE=dev", "AWS_SECRET_ACCESS_KEY=s", "ARCA_ENV=prod", "LD_PRELOAD=x.so",
		"PATH=/bin", "NODE_ENV=second", "noequals", "KUBECONFIG=/k", "LANG=C",
	}
	got := Select(environ, []string{"NODE_ENV", "GITHUB_*", "AWS_PROFILE", "L*", "A*", "PATH", "KUBECONFIG"})
	var names []string
	for _, v := range got {
		names = append(names, v.Name+"="+v.Value+" ("+v.Pattern+")")
	}
	want := "NODE_ENV=production (NODE_ENV),GITHUB_SHA=abc (GITHUB_*),GITHUB_REF=main (GITHUB_*),AWS_PROFILE=dev (AWS_PROFILE),KUBECONFIG=/k (KUBECONFIG)"
	if strings.Join(names, ",") != want {
		t.Fatalf("Select = %s\nwant     %s", strings.Join(names, ","), want)
	}
	if Select(environ, nil) != nil {
		t.Fatal("Select with no pattern passed something")
	}
	// An exact name a rule forbids is never passed, even unchecked.
	if got := Select(environ, []string{"LD_PRELOAD", "ARCA_ENV", "*"}); len(got) != 0 {
		t.Fatalf("Select passed %+v", got)
	}
}

func TestCloud(t *testing.T) {
	for _, n := range []string{"AWS_ACCESS_KEY_ID", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "CLOUDFLARE_API_TOKEN"} {
		if !Cloud(n) {
			t.Errorf("Cloud(%s) = false", n)
		}
	}
	for _, n := range []string{"GITHUB_SHA", "NODE_ENV", "CI", "KUBECONFIG", "AWS"} {
		if Cloud(n) {
			t.Errorf("Cloud(%s) = true", n)
		}
	}
	if l := CloudList(); l[0] != "AWS_*" || l[len(l)-1] != "SSH_AUTH_SOCK" {
		t.Fatalf("CloudList = %q", l)
	}
}

// docs/cli.md lists the cloud credentials as CloudList does.
func TestCloudListInDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "<!-- cloud credentials -->\n")
	if !ok {
		t.Fatal("docs/cli.md has no <!-- cloud credentials --> list")
	}
	list, _, _ := strings.Cut(after, "\n\n")
	var shown []string
	for _, f := range strings.Split(strings.ReplaceAll(list, "\n", " "), ",") {
		shown = append(shown, strings.Trim(strings.TrimSpace(f), "`."))
	}
	if got, want := strings.Join(shown, " "), strings.Join(CloudList(), " "); got != want {
		t.Fatalf("docs/cli.md lists\n%s\nthe code\n%s", got, want)
	}
}
