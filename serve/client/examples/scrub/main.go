// Command scrub runs a tool with a secret from arca in its environment, and
// passes on the tool's output with the secret redacted: what an agent host
// does before a model reads the output.
package main

import (
	"context"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/arca-secrets/arca/serve/client"
)

func main() {
	ctx := context.Background()
	config := filepath.Join(os.Getenv("HOME"), ".config", "arca", "arca.toml")
	c, err := client.Start(ctx, client.Options{Binary: "arca", Config: config, Environ: []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	token, err := c.Get(ctx, client.Request{Ref: "arca://app/token"})
	if err != nil {
		log.Fatal(err)
	}
	// The tool's stdout and stderr go through one scrub stream to ours.
	out := c.NewScrubWriter(ctx, os.Stdout, "tool", "")
	tool := exec.Command(os.Args[1], os.Args[2:]...)
	tool.Env = append(os.Environ(), "TOKEN="+string(token.Value.Reveal()))
	tool.Stdout, tool.Stderr = out, out
	runErr := tool.Run()
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
	if runErr != nil {
		log.Fatal(runErr)
	}
}
