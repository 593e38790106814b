package action_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/arca-secrets/arca/ops/action"
	"github.com/arca-secrets/arca/ops/config"
)

// An action with one allowed flag, run with a resolved credential in its
// environment; a flag it does not allow is refused before anything runs.
func ExampleRun() {
	cfg := config.Action{
		Argv:           []string{"sh", "-c", `echo "deploying with $# flag(s): $*"; test -n "$DEPLOY_TOKEN"`, "deploy"},
		ArgsRE:         regexp.MustCompile(`^--(dry-run|verbose)$`),
		MaxArgs:        config.DefaultMaxArgs,
		TimeoutMS:      config.DefaultActionTimeoutMS,
		MaxOutputBytes: config.DefaultMaxOutputBytes,
	}
	env := []string{"PATH=/usr/bin:/bin", "DEPLOY_TOKEN=resolved-by-the-ops-layer"}

	res, err := action.Run(context.Background(), cfg, []string{"--dry-run"}, env)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%sexit %d\n", res.Stdout, res.ExitCode)

	_, err = action.Run(context.Background(), cfg, []string{"--force"}, env)
	fmt.Println(err)
	// Output:
	// deploying with 1 flag(s): --dry-run
	// exit 0
	// argument 0 "--force" does not match the action's args "^--(dry-run|verbose)$"
}
