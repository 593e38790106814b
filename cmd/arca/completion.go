package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arca-secrets/arca/ops"
)

// runCompletion is `arca completion bash|zsh|fish`: a script completing the
// verbs, their flags and sub-verbs, and env names after --env (asked of
// `arca completion envs`, which reads the config only). The verbs and flags
// are those the help lists, so the script follows the binary.
func runCompletion(_ context.Context, c *cli, args []string) error {
	const usage = "usage: arca completion bash|zsh|fish"
	switch {
	case helpAsked(args):
		fmt.Fprintln(c.stdout, usage)
		printTopic(c.stdout, "completion", nil)
		return flag.ErrHelp
	case len(args) == 1 && args[0] == "envs":
		return c.completeEnvs()
	case len(args) != 1:
		return usagef("%s", usage)
	}
	switch args[0] {
	case "bash":
		c.bashCompletion(c.stdout, false)
	case "zsh":
		fmt.Fprintln(c.stdout, "#compdef arca\n# zsh completion for arca: arca completion zsh > \"${fpath[1]}/_arca\"\nautoload -U +X bashcompinit && bashcompinit")
		c.bashCompletion(c.stdout, true)
	case "fish":
		c.fishCompletion(c.stdout)
	default:
		return usagef("no completion for %q (%s)", args[0], usage)
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

// subVerbs are the words that follow a verb with sub-verbs.
func subVerbs() map[string]string {
	return map[string]string{"vault": "recipients rekey backup restore", "vault recipients": "list add rm",
		"audit": "verify anchor", "identity": "rotate", "completion": "bash zsh fish", "help": strings.Join(helpNames()[:len(verbs())], " ")}
}

func (c *cli) bashCompletion(w io.Writer, zsh bool) {
	if !zsh {
		fmt.Fprintln(w, "# bash completion for arca: source <(arca completion bash)")
	}
	// The words before the cursor, flags and their values left out, name
	// the verb; a word too many (a ref, a file) is dropped until one does.
	fmt.Fprint(w, `_arca() {
  local cur prev path i w flags words
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "$w" in
      --config|--env|--env-file|--secret|--file|--format|--from|--ns|--identity|--template|--out|--mode|--addr|--token|--since|--until|--ref|--op|--outcome|--actor|--anchor) ((i++)) ;;
      -*) ;;
      *) path="${path:+$path }$w" ;;
    esac
  done
  case "$prev" in
    --env) COMPREPLY=($(compgen -W "$(arca completion envs 2>/dev/null)" -- "$cur")); return ;;
    --config|--env-file|--template|--out|--identity) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  while :; do
    case "$path" in
`)
	fmt.Fprintf(w, "      \"\") flags=%q; words=%q; break ;;\n", "--config --env --version --help", strings.Join(helpNames()[:len(verbs())], " "))
	fmt.Fprintf(w, "      %q) flags=\"\"; words=%q; break ;;\n", "vault recipients", subVerbs()["vault recipients"])
	for _, name := range helpNames() {
		fmt.Fprintf(w, "      %q) flags=%q; words=%q; break ;;\n", name, strings.Join(c.flagsOf(name), " "), subVerbs()[name])
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

func (c *cli) fishCompletion(w io.Writer) {
	fmt.Fprintln(w, "# fish completion for arca: arca completion fish > ~/.config/fish/completions/arca.fish")
	fmt.Fprintln(w, "complete -c arca -f")
	fmt.Fprintln(w, "complete -c arca -l env -x -a '(arca completion envs 2>/dev/null)'")
	fmt.Fprintln(w, "complete -c arca -l config -r -F")
	verbsOnly := helpNames()[:len(verbs())]
	for _, v := range verbsOnly {
		fmt.Fprintf(w, "complete -c arca -n '__fish_use_subcommand' -a %s -d %q\n", v, verbs()[v].summary)
	}
	for _, name := range helpNames() {
		parts := strings.Fields(name)
		cond := "__fish_seen_subcommand_from " + parts[0]
		if len(parts) > 1 {
			cond += "; and __fish_seen_subcommand_from " + parts[len(parts)-1]
		}
		for _, f := range c.flagsOf(name) {
			if f == "--env" || f == "--config" {
				continue
			}
			fmt.Fprintf(w, "complete -c arca -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
		if words := subVerbs()[name]; words != "" {
			fmt.Fprintf(w, "complete -c arca -n '%s' -a '%s'\n", cond, words)
		}
	}
}
