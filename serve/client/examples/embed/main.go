// Command embed runs a command with three secrets from arca in its environment.
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
	// Pin the config, so that serve takes no arca.toml from the directory it runs in.
	config := filepath.Join(os.Getenv("HOME"), ".config", "arca", "arca.toml")
	c, err := client.Start(context.Background(), client.Options{Binary: "arca", Config: config, Environ: []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}})
	if err != nil {
		log.Fatal(err)
	}
	secrets, err := c.Resolve(context.Background(), map[string]string{"DB_PASSWORD": "arca://app/db", "API_KEY": "arca://app/api", "TOKEN": "arca://app/token"}, client.Request{})
	c.Close()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = append(os.Environ(), secrets.Environ()...), os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatal(err)
	}
}
