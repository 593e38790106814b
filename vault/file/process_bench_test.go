package file

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkProcessGet times a whole `arca get` process, as a person or a
// script runs it: start, config, identity, vault read, age unwrap, the
// audit append, exit. `arca version` (a process that does none of that) is
// measured beside it as the floor.
func BenchmarkProcessGet(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "arca")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/arca").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	b.Run("version", func(b *testing.B) {
		for range b.N {
			if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil {
				b.Fatalf("arca version: %v\n%s", err, out)
			}
		}
	})
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			f, names := benchVault(b, n)
			home := b.TempDir()
			install(b, f.path, filepath.Join(home, ".local/share/arca/default.vault"))
			install(b, f.idPath, filepath.Join(home, ".config/arca/identity.txt"))
			ref := "arca://" + names[n/2]
			b.ResetTimer()
			for range b.N {
				cmd := exec.Command(bin, "get", ref)
				cmd.Env = []string{"HOME=" + home}
				cmd.Dir = home
				if out, err := cmd.CombinedOutput(); err != nil || len(out) != 32 {
					b.Fatalf("arca get: %v (%d bytes out)", err, len(out))
				}
			}
		})
	}
}

// install copies src to dst, making dst's directory 0700 and dst 0600.
func install(b *testing.B, src, dst string) {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		b.Fatal(err)
	}
}
