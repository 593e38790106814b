package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/ops"
)

func completionCommand() *command {
	return &command{
		name: "completion", args: "bash|zsh|fish", summary: "print a bash, zsh or fish script that completes arca's verbs, flags and envs", bare: true,
		text: "Print a script that completes arca's verbs, flags and env names in bash, zsh or fish.",
		examples: []string{"source <(arca completion bash)", "arca completion zsh > \"${fpath[1]}/_arca\"",
			"arca completion fish > ~/.config/fish/completions/arca.fish"},
		exits: plainExits,
		run:   runCompletion,
	}
}

// runCompletion is `arca completion bash|zsh|fish`: a script completing the
// verbs, their flags and sub-verbs, and env names after --env (asked of
// `arca completion envs`, which reads the config only). The verbs, their
// flags and sub-verbs are the command tree's, so the script follows the
// binary.
func runCompletion(_ context.Context, c *cli, fs *verbFlags, args []string) error {
	args, err := c.parse(fs, args, 1)
	if err != nil {
		return err
	}
	switch args[0] {
	case "envs":
		return c.completeEnvs()
	case "bash":
		bashCompletion(c.stdout, false)
	case "zsh":
		fmt.Fprintln(c.stdout, "#compdef arca\n# zsh completion for arca: arca completion zsh > \"${fpath[1]}/_arca\"\nautoload -U +X bashcompinit && bashcompinit")
		bashCompletion(c.stdout, true)
	case "fish":
		fishCompletion(c.stdout)
	default:
		return usagef("no completion for %q (%s)", args[0], fs.usage())
	}
	return nil
}

// completeEnvs prints the configured env names, one a line; nothing when
// the config does not load (a completion must not print errors).
func (c *cli) completeEnvs() error {
	cfg, err := ops.LoadConfig(c.global.config, c.getenv)
	if err != nil {
		return nil
	}
	for _, e := range cfg.EnvNames() {
		fmt.Fprintln(c.stdout, e)
	}
	return nil
}

// completed is what completion knows of one command: its path, its
// flags (--name) and the words that may follow it.
type completed struct {
	path, flags, words string
}

// completions are those of every command in the tree, and the flags that
// take a value: every one, and those whose value is a file.
func completions() (cmds []completed, valued, files []string) {
	root := commands()
	valued, files = []string{"--config", "--env"}, []string{"--config"}
	c := &cli{}
	root.walk(func(path string, cmd *command) {
		fs := c.flagSet(path, cmd)
		var flags []string
		if cmd.run != nil {
			flags = flagNames(fs.FlagSet)
		}
		fs.VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				return
			}
			valued = append(valued, "--"+f.Name)
			if v, _ := flag.UnquoteUsage(f); v == "FILE" || v == "PATH" {
				files = append(files, "--"+f.Name)
			}
		})
		cmds = append(cmds, completed{path, strings.Join(flags, " "), strings.Join(cmd.subNames(), " ")})
	})
	verbs := strings.Join(root.subNames(), " ")
	var global []string
	for _, f := range globalFlags() {
		global = append(global, "--"+f)
	}
	cmds = append([]completed{{"", strings.Join(global, " "), verbs}, {"help", "", verbs}}, cmds...)
	slices.Sort(valued)
	slices.Sort(files)
	return cmds, slices.Compact(valued), slices.Compact(files)
}

func bashCompletion(w io.Writer, zsh bool) {
	cmds, valued, files := completions()
	if !zsh {
		fmt.Fprintln(w, "# bash completion for arca: source <(arca completion bash)")
	}
	// The words before the cursor, flags and their values left out, name
	// the verb; a word too many (a ref, a file) is dropped until one does.
	fmt.Fprintf(w, `_arca() {
  local cur prev path i w flags words
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "$w" in
      %s) ((i++)) ;;
      -*) ;;
      *) path="${path:+$path }$w" ;;
    esac
  done
  case "$prev" in
    --env) COMPREPLY=($(compgen -W "$(arca completion envs 2>/dev/null)" -- "$cur")); return ;;
    %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  while :; do
    case "$path" in
`, strings.Join(valued, "|"), strings.Join(files, "|"))
	for _, cmd := range cmds {
		fmt.Fprintf(w, "      %q) flags=%q; words=%q; break ;;\n", cmd.path, cmd.flags, cmd.words)
	}
	fmt.Fprint(w, `    esac
    if [[ "$path" == *" "* ]]; then path="${path% *}"; else path=""; fi
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ -n "$words" ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _arca arca
`)
}

func fishCompletion(w io.Writer) {
	fmt.Fprintln(w, "# fish completion for arca: arca completion fish > ~/.config/fish/completions/arca.fish")
	fmt.Fprintln(w, "complete -c arca -f")
	fmt.Fprintln(w, "complete -c arca -l env -x -a '(arca completion envs 2>/dev/null)'")
	fmt.Fprintln(w, "complete -c arca -l config -r -F")
	for _, v := range commands().subs {
		fmt.Fprintf(w, "complete -c arca -n '__fish_use_subcommand' -a %s -d %q\n", v.name, v.summary)
	}
	cmds, _, _ := completions()
	for _, cmd := range cmds[2:] {
		parts := strings.Fields(cmd.path)
		cond := "__fish_seen_subcommand_from " + parts[0]
		if len(parts) > 1 {
			cond += "; and __fish_seen_subcommand_from " + parts[len(parts)-1]
		}
		for _, f := range strings.Fields(cmd.flags) {
			if f == "--env" || f == "--config" {
				continue
			}
			fmt.Fprintf(w, "complete -c arca -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
		if cmd.words != "" {
			fmt.Fprintf(w, "complete -c arca -n '%s' -a '%s'\n", cond, cmd.words)
		}
	}
}
