package launch

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
)

// launchErr starts a one-member cluster of the real etcd whose client port
// is clientPort and with extra flags, and returns launch's error.
func launchErr(t *testing.T, clientPort int, extra ...string) error {
	t.Helper()
	bin, err := LookBinary()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	if clientPort != 0 {
		ports[0] = clientPort
	}
	c := newCluster(bin, t.TempDir(), ports)
	c.Members[0].args = append(c.Members[0].args, extra...)
	t.Cleanup(func() { c.Kill() }) // launch kills them on failure; this is for a success
	return c.launch(t.Context())
}

func TestPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = launchErr(t, l.Addr().(*net.TCPAddr).Port)
	if !errors.Is(err, ErrPortTaken) {
		t.Fatalf("launch on a taken port: %v, want ErrPortTaken", err)
	}
}

func TestFailureShowsLog(t *testing.T) {
	err := launchErr(t, 0, "--no-such-flag")
	if err == nil {
		t.Fatal("etcd started with an unknown flag")
	}
	if errors.Is(err, ErrPortTaken) {
		t.Errorf("unknown flag taken for a port in use: %v", err)
	}
	// etcd reports the bad flag on stderr, which goes to its log.
	if !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("error does not show the log's tail: %v", err)
	}
}

func TestEtcdEnv(t *testing.T) {
	got := etcdEnv([]string{"HOME=/root", "ETCD_NAME=x", "ETCD_DATA_DIR=/y", "PATH=/bin"})
	for _, kv := range got {
		if strings.HasPrefix(kv, "ETCD_") && !strings.HasPrefix(kv, "ETCD_UNSUPPORTED_ARCH=") {
			t.Errorf("etcdEnv kept %q", kv)
		}
	}
	if !slices.Contains(got, "HOME=/root") || !slices.Contains(got, "PATH=/bin") {
		t.Errorf("etcdEnv(...) = %q, dropped other variables", got)
	}
}
