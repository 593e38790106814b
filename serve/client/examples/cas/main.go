// Command cas appends a line to a secret without losing another writer's
// change: it reads, writes with IfVersion, and on a *client.Conflict reads
// again. Usage: cas REF < LINE; it prints the version it wrote.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/arca-secrets/arca/serve/client"
)

// update writes change(value) over ref as of the version it read, and
// reads again when another writer was first, at most tries times.
func update(ctx context.Context, c *client.Client, ref string, change func(client.Secret) []byte, tries int) (client.Put, error) {
	var conflict *client.Conflict
	for range tries {
		got, err := c.Get(ctx, client.Request{Ref: ref})
		if err != nil {
			return client.Put{}, err
		}
		put, err := c.Put(ctx, client.Request{Ref: ref, Value: change(got.Value.Secret), IfVersion: new(got.Version)})
		if !errors.As(err, &conflict) {
			return put, err // written, or failed for another reason
		}
		// Someone wrote ref since the get: change what they wrote.
	}
	return client.Put{}, fmt.Errorf("%s changed under each of %d tries", ref, tries)
}

func main() {
	line, err := io.ReadAll(os.Stdin) // a secret: never on the command line
	if err != nil || len(os.Args) != 2 {
		log.Fatal("usage: cas REF < LINE")
	}
	ctx := context.Background()
	// Pin the config, so that serve takes no arca.toml from the directory it runs in.
	config := filepath.Join(os.Getenv("HOME"), ".config", "arca", "arca.toml")
	c, err := client.Start(ctx, client.Options{Binary: "arca", Config: config, Environ: []string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}})
	if err != nil {
		log.Fatal(err)
	}
	put, err := update(ctx, c, os.Args[1], func(v client.Secret) []byte {
		return bytes.Join([][]byte{v.Reveal(), bytes.TrimSuffix(line, []byte("\n"))}, []byte("\n"))
	}, 10)
	c.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("version %d\n", put.Version)
}
