package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/secretfile"
)

func helpCLI() *cli {
	return &cli{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, now: time.Now,
		getenv: func(string) string { return "" }, environ: func() []string { return nil }}
}

// arca runs args on a cli of its own and returns its status, stdout and
// stderr.
func arca(args ...string) (int, string, string) {
	c := helpCLI()
	st := c.main(context.Background(), args)
	return st, c.stdout.(*bytes.Buffer).String(), c.stderr.(*bytes.Buffer).String()
}

// Every command in the tree is whole: a name, a summary, a paragraph,
// examples and exit statuses, and something to run (itself, or its
// sub-commands, each named once).
func TestCommandTree(t *testing.T) {
	n := 0
	commands().walk(func(path string, cmd *command) {
		n++
		switch {
		case cmd.name == "" || strings.ContainsAny(cmd.name, " -"):
			t.Errorf("%q: a command's name is one word", path)
		case cmd.summary == "" || cmd.text == "" || cmd.exits == "" || len(cmd.examples) == 0:
			t.Errorf("arca %s lacks a summary, a paragraph, examples or its exit statuses", path)
		case cmd.run == nil && len(cmd.subs) == 0:
			t.Errorf("arca %s runs nothing: no run, no sub-commands", path)
		}
		if names := cmd.subNames(); len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
			t.Errorf("arca %s names a sub-command twice: %v", path, names)
		}
	})
	if n < len(commands().subs) {
		t.Fatalf("the walk visited %d commands", n)
	}
}

// Every command is reached by dispatch (COMMAND... -h), by help (help
// COMMAND...) and by completion, which offers it after its parent and
// completes the flags its help lists, each given as --name.
func TestEveryCommandReached(t *testing.T) {
	cmds, _, _ := completions()
	completes := map[string]completed{}
	for _, cp := range cmds {
		completes[cp.path] = cp
	}
	commands().walk(func(path string, cmd *command) {
		want := helpOf(path, cmd)
		if !strings.HasPrefix(want, "usage: arca "+path+" ") && !strings.HasPrefix(want, "usage: arca "+path+"\n") {
			t.Errorf("arca help %s does not start with its usage:\n%s", path, want)
		}
		words := strings.Fields(path)
		for _, args := range [][]string{append(slices.Clone(words), "-h"), append([]string{"help"}, words...)} {
			st, out, errs := arca(args...)
			if st != 0 || out != want || errs != "" {
				t.Errorf("arca %s: status %d, stderr %q, stdout not its help:\n%s", strings.Join(args, " "), st, errs, out)
			}
		}
		parent := strings.Join(words[:len(words)-1], " ")
		if !slices.Contains(strings.Fields(completes[parent].words), cmd.name) {
			t.Errorf("completion does not offer %s after %q", cmd.name, parent)
		}
		var helpFlags []string
		_, section, _ := strings.Cut(want, "\nflags:\n")
		section, _, _ = strings.Cut(section, "\n\n")
		for _, l := range strings.Split(section, "\n") {
			if f, ok := strings.CutPrefix(l, "  --"); ok {
				helpFlags = append(helpFlags, "--"+strings.Fields(f)[0])
			} else if l != "" && !strings.HasPrefix(l, "    \t") {
				t.Errorf("arca help %s: a flag line %q is not --name", path, l)
			}
		}
		if got := strings.Join(helpFlags, " "); got != completes[path].flags {
			t.Errorf("completion of arca %s gives the flags %q, its help %q", path, completes[path].flags, got)
		}
	})
}

// A word that names no command is a usage error that names the nearest.
func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"lsit", `arca: unknown command "lsit"; did you mean "list"? (run arca help)` + "\n"},
		{"vault rekye", `arca: unknown command "vault rekye"; did you mean "vault rekey"? (run arca help vault)` + "\n"},
		{"help vault recipients ad", `arca: unknown command "vault recipients ad"; did you mean "vault recipients add"? (run arca help vault recipients)` + "\n"},
		{"vault frobnicate", `arca: unknown command "vault frobnicate" (run arca help vault)` + "\n"},
		{"help get extra", `arca: unknown command "get extra" (run arca help get)` + "\n"},
		{"vault", "arca: usage: arca vault recipients|rekey|backup|restore ... (run arca help vault)\n"},
	} {
		st, out, errs := arca(strings.Fields(tc.args)...)
		if st != manifest.ExitUsage || out != "" || errs != tc.want {
			t.Errorf("arca %s: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.want)
		}
	}
}

// An example uses the command it is for, only flags that command has, and
// for a flag that takes one of a fixed list, one of them.
func TestHelpExamples(t *testing.T) {
	global := []string{"--config", "--env", "--version", "--help"}
	choices := map[string][]string{"migrate --from": secretfile.Formats()}
	commands().walk(func(name string, cmd *command) {
		flags := flagNames((&cli{}).flagSet(name, cmd).FlagSet)
		for _, ex := range cmd.examples {
			line, _, _ := strings.Cut(ex, " # ")
			at := strings.Index(line, "arca ")
			if at < 0 {
				t.Errorf("%s: example %q runs no arca", name, ex)
				continue
			}
			// This arca's words: up to a pipe, an &&, or the -- that ends its flags.
			line = line[at:]
			for _, end := range []string{" | ", " && ", " -- "} {
				line, _, _ = strings.Cut(line, end)
			}
			words := strings.Fields(line)
			var verb []string
			for i, w := range words[1:] {
				if strings.HasPrefix(w, "-") && w != "-" { // a lone - is an argument: stdin
					f, v, eq := strings.Cut(w, "=")
					if !slices.Contains(flags, f) && !slices.Contains(global, f) {
						t.Errorf("%s: example %q uses %s, which arca %s does not take", name, ex, f, name)
					}
					if !eq && i+2 < len(words) {
						v = words[i+2]
					}
					if want, ok := choices[name+" "+f]; ok && !slices.Contains(want, v) {
						t.Errorf("%s: example %q gives %s %q, which is none of %v", name, ex, f, v, want)
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
	})
}

// docs/arca.1 is what arca help --man prints: the man page holds each
// command's help exactly (regenerate: go run ./cmd/arca help --man > docs/arca.1).
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
	commands().walk(func(name string, cmd *command) {
		for _, l := range strings.Split(strings.TrimRight(helpOf(name, cmd), "\n"), "\n") {
			if !bytes.Contains(want, []byte(roffEscape(l)+"\n")) {
				t.Errorf("the man page lacks %q of arca help %s", l, name)
			}
		}
	})
}

// The manifest's cli_only is every verb of the CLI but serve and the ops
// serve has: no more (nothing advertised that the binary lacks), no less.
func TestCLIOnlyIsTheVerbs(t *testing.T) {
	var want []string
	for _, v := range commands().subNames() {
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
