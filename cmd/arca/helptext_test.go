package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
)

func helpCLI() *cli {
	return &cli{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, now: time.Now,
		getenv: func(string) string { return "" }, environ: func() []string { return nil }}
}

// Every verb and sub-verb has help: a paragraph, examples and its exit
// statuses, after its usage line and flags; and every topic is a verb's.
func TestHelpTopics(t *testing.T) {
	c := helpCLI()
	for _, name := range helpNames() {
		tp, ok := topics()[name]
		if !ok {
			t.Errorf("arca help %s: no topic", name)
			continue
		}
		out := c.helpOf(name)
		for _, want := range []string{"usage: arca " + name, wrap(tp.about, 76), "\nexamples:\n", "\nexit status: "} {
			if !strings.Contains(out, want) {
				t.Errorf("arca help %s does not say %q:\n%s", name, want, out)
			}
		}
	}
	for name := range topics() {
		if !slices.Contains(helpNames(), name) {
			t.Errorf("topic %q is no verb's", name)
		}
	}
}

// An example uses the verb it is for, and only flags that verb has.
func TestHelpExamples(t *testing.T) {
	c := helpCLI()
	global := []string{"--config", "--env", "--version", "--help"}
	for _, name := range helpNames() {
		flags := c.flagsOf(name)
		for _, ex := range topics()[name].examples {
			cmd, _, _ := strings.Cut(ex, " # ")
			at := strings.Index(cmd, "arca ")
			if at >= 0 {
				// This arca's words: up to a pipe, an &&, or the -- that ends its flags.
				cmd = cmd[at:]
				for _, end := range []string{" | ", " && ", " -- "} {
					cmd, _, _ = strings.Cut(cmd, end)
				}
				at = 0
			}
			if at < 0 {
				t.Errorf("%s: example %q runs no arca", name, ex)
				continue
			}
			words := strings.Fields(cmd[at:])
			var verb []string
			for _, w := range words[1:] {
				if strings.HasPrefix(w, "-") {
					f, _, _ := strings.Cut(w, "=")
					if !slices.Contains(flags, f) && !slices.Contains(global, f) {
						t.Errorf("%s: example %q uses %s, which arca %s does not take", name, ex, f, name)
					}
				} else if len(verb) < len(strings.Fields(name)) && !strings.ContainsAny(w, "/.$<>|'\"") {
					verb = append(verb, w)
				}
			}
			if got := strings.Join(verb, " "); got != name && !(name == "version" && slices.Contains(words, "--version")) &&
				!strings.HasPrefix(name, got+" ") {
				t.Errorf("%s: example %q runs arca %s", name, ex, got)
			}
		}
	}
}

// docs/arca.1 is what arca help --man prints: the man page holds each
// verb's help exactly (regenerate: go run ./cmd/arca help --man > docs/arca.1).
func TestManPage(t *testing.T) {
	c := helpCLI()
	var b bytes.Buffer
	c.writeMan(&b)
	want, err := os.ReadFile("../../docs/arca.1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("docs/arca.1 is not what arca help --man prints: run go run ./cmd/arca help --man > docs/arca.1")
	}
	for _, name := range helpNames() {
		for _, l := range strings.Split(strings.TrimRight(c.helpOf(name), "\n"), "\n") {
			if !bytes.Contains(want, []byte(roffEscape(l)+"\n")) {
				t.Errorf("the man page lacks %q of arca help %s", l, name)
			}
		}
	}
}

// The manifest's cli_only is every verb of the CLI but serve and the ops
// serve has: no more (nothing advertised that the binary lacks), no less.
func TestCLIOnlyIsTheVerbs(t *testing.T) {
	var want []string
	for v := range verbs() {
		if _, served := manifest.Op(v); !served && v != "serve" {
			want = append(want, v)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(manifest.CLIOnly()))
	if !slices.Equal(got, want) {
		t.Errorf("manifest.CLIOnly() is %v, the CLI's own verbs are %v", got, want)
	}
}
