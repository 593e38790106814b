package file_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/file"

	"github.com/arca-secrets/arca/vault"
)

// The test binary doubles as a writer process for the crash and
// multi-process tests: with writerEnv set, TestMain runs writerMain instead
// of the tests.
const (
	writerEnv      = "ARCA_VAULT_TEST_WRITER" // "loop" or "count"
	writerPathEnv  = "ARCA_VAULT_TEST_PATH"
	writerIDEnv    = "ARCA_VAULT_TEST_IDENTITY"
	writerArgEnv   = "ARCA_VAULT_TEST_ARG" // loop: first index; count: number of puts
	sharedProcName = "shared/counter"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(writerEnv); mode != "" {
		os.Exit(writerMain(mode, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// writerMain opens the vault and puts, printing "ok <i>" after each put
// returns. loop puts "k/<i>" = "v-<i>" from i = arg until killed; count puts
// arg times to sharedProcName.
func writerMain(mode string, stdout, stderr io.Writer) int {
	arg, err := strconv.Atoi(os.Getenv(writerArgEnv))
	if err != nil {
		fmt.Fprintln(stderr, "writer:", err)
		return 2
	}
	f, err := file.Open(os.Getenv(writerPathEnv), os.Getenv(writerIDEnv), nil)
	if err != nil {
		fmt.Fprintln(stderr, "writer:", err)
		return 1
	}
	defer f.Close()
	fmt.Fprintln(stdout, "ready")
	for i := 0; mode == "loop" || i < arg; i++ {
		name, value := sharedProcName, "from pid "+strconv.Itoa(os.Getpid())
		if mode == "loop" {
			name, value = "k/"+strconv.Itoa(arg+i), "v-"+strconv.Itoa(arg+i)
		}
		w := vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}
		if _, err := f.Apply(context.Background(), w, approveAll); err != nil {
			fmt.Fprintln(stderr, "writer:", err)
			return 1
		}
		fmt.Fprintf(stdout, "ok %d\n", arg+i)
	}
	return 0
}

// writerProc is a running writer process and the lines it has printed.
type writerProc struct {
	cmd   *exec.Cmd
	lines chan string // closed when the process's stdout closes
}

func startWriter(t *testing.T, ctx context.Context, v fileVault, mode string, arg int) *writerProc {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+mode, writerPathEnv+"="+v.path,
		writerIDEnv+"="+v.idPath, writerArgEnv+"="+strconv.Itoa(arg))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &writerProc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

// waitReady waits for the writer's "ready" line: it has opened the vault.
func (p *writerProc) waitReady(t *testing.T) {
	t.Helper()
	select {
	case line := <-p.lines:
		if line != "ready" {
			t.Fatalf("writer said %q, want ready", line)
		}
	case <-time.After(10 * time.Second): // a guard against a hang, not a timing assertion
		t.Fatal("writer not ready after 10s")
	}
}

// acks drains the writer's remaining lines, waits for it to exit and returns
// the indexes it acknowledged and how it ended.
// waitAck waits for the writer's next acknowledged write and returns it.
func (p *writerProc) waitAck(t *testing.T) int {
	t.Helper()
	select {
	case line := <-p.lines:
		var i int
		if _, err := fmt.Sscanf(line, "ok %d", &i); err != nil {
			t.Fatalf("writer said %q, want an acknowledged write", line)
		}
		return i
	case <-time.After(10 * time.Second): // a guard against a hang, not a timing assertion
		t.Fatal("no write acknowledged after 10s")
	}
	return 0
}

func (p *writerProc) acks() ([]int, error) {
	var acked []int
	var bad error
	for line := range p.lines {
		var i int
		if _, err := fmt.Sscanf(line, "ok %d", &i); err == nil {
			acked = append(acked, i)
		} else if line != "ready" {
			bad = fmt.Errorf("writer said %q", line)
		}
	}
	if err := p.cmd.Wait(); err != nil || bad != nil {
		return acked, errors.Join(err, bad)
	}
	return acked, nil
}
