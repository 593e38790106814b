package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/secretfile"
)

func completionCommand() *command {
	return &command{
		name: "completion", args: "bash|zsh|fish", summary: "print a bash, zsh or fish script that completes arca's verbs, flags, envs and refs", bare: true,
		text: "Print a script that completes arca's verbs, flags and env names in bash, zsh or fish; refs after get, put and the other verbs of one REF (from a list of the env, at most 200, given up after 2 s, never asking for a passphrase); formats after --from; ops after --op.",
		examples: []string{"source <(arca completion bash)", "arca completion zsh > \"${fpath[1]}/_arca\"",
			"arca completion fish > ~/.config/fish/completions/arca.fish"},
		exits: plainExits,
		run:   runCompletion,
	}
}

// runCompletion is `arca completion bash|zsh|fish`: a script completing the
// verbs, their flags and sub-verbs, env names after --env (asked of
// `arca completion envs`, which reads the config only), refs after a verb
// of one REF (asked of `arca completion refs PREFIX`, completerefs.go),
// migrate's formats after --from and the audit trail's ops after --op.
// The verbs, their flags and sub-verbs, the formats and the ops are the
// binary's own (the command tree, secretfile.Formats, the op table), so
// the script follows the binary.
func runCompletion(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
	args, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	if len(args) == 2 && args[0] == "refs" {
		return c.completeRefs(ctx, args[1])
	}
	if len(args) != 1 {
		return usagef("usage: arca completion bash|zsh|fish")
	}
	switch args[0] {
	case "envs":
		return c.completeEnvs()
	case "refs":
		return c.completeRefs(ctx, "")
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
// flags (--name), the words that may follow it, and whether a ref does.
type completed struct {
	path, flags, words string
	ref                bool
}

// completedValues are the values completed after a flag, by the flag:
// migrate's formats and the ops the audit trail's events carry.
func completedValues() map[string][]string {
	return map[string][]string{
		"--from": secretfile.Formats(),
		"--op":   manifest.EventNames(),
	}
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
		cmds = append(cmds, completed{path, strings.Join(flags, " "), strings.Join(cmd.subNames(), " "), strings.HasPrefix(cmd.args, "REF")})
	})
	verbs := strings.Join(root.subNames(), " ")
	var global []string
	for _, f := range globalFlags() {
		global = append(global, "--"+f)
	}
	cmds = append([]completed{{"", strings.Join(global, " "), verbs, false}, {"help", "", verbs, false}}, cmds...)
	slices.Sort(valued)
	slices.Sort(files)
	return cmds, slices.Compact(valued), slices.Compact(files)
}

func bashCompletion(w io.Writer, zsh bool) {
	cmds, valued, files := completions()
	if !zsh {
		fmt.Fprintln(w, "# bash completion for arca: source <(arca completion bash)")
	}
	// A ref is asked of arca itself, with the --env and --config of the
	// line. bash breaks words at ":" (arca://x is three words), so the ref
	// is read off the line up to the cursor, and the part before the
	// current word is cut from each candidate; zsh does not break there.
	fmt.Fprint(w, `_arca_refs() {
  local line full pre i opts=()
  line="${COMP_LINE:0:COMP_POINT}"
  full="${line##*[[:space:]]}"
  [[ -n "$COMP_LINE" && "$full" == *"$cur" ]] || full="$cur"
  pre="${full%"$cur"}"
  for ((i = 1; i < COMP_CWORD - 1; i++)); do
    case "${COMP_WORDS[i]}" in
      --env|--config)
        if [[ "${COMP_WORDS[i+1]}" == "=" ]]; then # bash breaks --env=E at "=" too
          opts+=("${COMP_WORDS[i]}=${COMP_WORDS[i+2]}"); ((i += 2))
        else
          opts+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}"); ((i++))
        fi ;;
      --env=*|--config=*) opts+=("${COMP_WORDS[i]}") ;;
    esac
  done
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$(arca "${opts[@]}" completion refs "$full" 2>/dev/null)" -- "$full"))
  COMPREPLY=("${COMPREPLY[@]#"$pre"}")
}
`)
	// The words before the cursor, flags and their values left out, name
	// the verb; a word too many (a ref, a file) is dropped until one does.
	fmt.Fprintf(w, `_arca() {
  local cur prev path i w flags words ref
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "$w" in
      %s) if [[ "${COMP_WORDS[i+1]}" == "=" ]]; then ((i += 2)); else ((i++)); fi ;;
      -*) ;;
      *) path="${path:+$path }$w" ;;
    esac
  done
  case "$prev" in
    --env) COMPREPLY=($(compgen -W "$(arca completion envs 2>/dev/null)" -- "$cur")); return ;;
    %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
`, strings.Join(valued, "|"), strings.Join(files, "|"))
	values := completedValues()
	for _, f := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", f, strings.Join(values[f], " "))
	}
	fmt.Fprint(w, `  esac
  while :; do
    case "$path" in
`)
	for _, cmd := range cmds {
		ref := ""
		if cmd.ref {
			ref = "1"
		}
		fmt.Fprintf(w, "      %q) flags=%q; words=%q; ref=%q; break ;;\n", cmd.path, cmd.flags, cmd.words, ref)
	}
	fmt.Fprint(w, `    esac
    if [[ "$path" == *" "* ]]; then path="${path% *}"; else path=""; fi
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [[ -n "$words" ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [[ -n "$ref" ]]; then
    _arca_refs
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
	// A ref is asked of arca itself, with the --env and --config of the line.
	fmt.Fprint(w, `function __arca_refs
    set -l words (commandline -opc)
    set -l opts
    for i in (seq 2 (math (count $words) - 1))
        if contains -- $words[$i] --env --config
            set -a opts $words[$i] $words[(math $i + 1)]
        else if string match -qr -- '^--(env|config)=' $words[$i]
            set -a opts $words[$i]
        end
    end
    arca $opts completion refs (commandline -ct) 2>/dev/null
end
`)
	values := completedValues()
	for _, f := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(w, "complete -c arca -l %s -x -a '%s'\n", strings.TrimPrefix(f, "--"), strings.Join(values[f], " "))
	}
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
			if f == "--env" || f == "--config" || values[f] != nil {
				continue
			}
			fmt.Fprintf(w, "complete -c arca -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
		if cmd.words != "" {
			fmt.Fprintf(w, "complete -c arca -n '%s' -a '%s'\n", cond, cmd.words)
		}
		if cmd.ref {
			fmt.Fprintf(w, "complete -c arca -n '%s' -a '(__arca_refs)'\n", cond)
		}
	}
}
