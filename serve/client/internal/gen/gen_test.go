package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerated: ops_gen.go is what the generator writes from today's op
// table; run `go generate ./serve/client` when it is not.
func TestGenerated(t *testing.T) {
	dir := filepath.Join("..", "..")
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, target))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the generator writes: run go generate ./serve/client", target)
	}
}

// TestDeclarations: the generator binds an op to the type that says it is
// its result, gives an op with none a map, and refuses what it cannot
// write right.
func TestDeclarations(t *testing.T) {
	gen := func(src string) (string, error) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "types.go"), []byte("package client\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := generate(dir)
		return string(b), err
	}
	out, err := gen("// Got is the result of get.\ntype Got struct{ Policy *Policy }\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func (c *Client) Get(ctx context.Context, r Request) (Got, error) {",
		"func (c *Client) Put(ctx context.Context, r Request) (PutResult, error) {",
		"type PutResult struct {",
		"CreatedAt time.Time `json:\"created_at\"`",
		"Policy *Policy `json:\"-\"`",
		"type ListRecord struct {",
		"Records []ListRecord `json:\"records\"`",
		"PDPConfigured bool `json:\"pdp_configured\"`",
		"func (c *Client) Shutdown(ctx context.Context) error {",
		"case *Got: r.Policy = p",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for src, why := range map[string]string{
		"// Got is the result of get.\ntype Got struct{ Value string }\n":                                          "no Policy field",
		"// Nope is the result of nope.\ntype Nope struct{}\n":                                                     "not an op",
		"// A is the result of get.\ntype A struct{ Policy int }\n\n// B is the result of get.\ntype B struct{}\n": "both",
	} {
		if _, err := gen(src); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", src, err, why)
		}
	}
}

// TestWrittenTypesCompile: with no result type declared, what the generator
// writes for every op compiles, beside the few names of package client it
// uses.
func TestWrittenTypesCompile(t *testing.T) {
	dir := t.TempDir()
	out, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	stub := `package client

import "context"

type Client struct{}
type Request struct{}
type Policy struct{}
type SecretValue struct{}

func Call[T any](context.Context, *Client, string, Request) (T, error) { var v T; return v, nil }
`
	for name, text := range map[string]string{"go.mod": "module example.com/client\n\ngo 1.24\n", "stub.go": stub, target: string(out)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the generated file: %v\n%s\n%s", err, b, out)
	}
}
