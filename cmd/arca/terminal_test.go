package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// hostileMember is an etcd member that answers with text meant for the
// terminal of whoever reads arca's output: its status gives a version that
// retitles the window and adds a line of its own, and every read fails with
// a description that erases the line above and writes the clipboard.
type hostileMember struct {
	pb.UnimplementedMaintenanceServer
	pb.UnimplementedKVServer
}

const (
	hostileVersion = "3.5.0\x1b]0;pwned\x07\n  etcd member https://127.0.0.1:1 (1, leader, etcd 3.5.0) answers; leader 1"
	hostileDesc    = "no\x1b[1A\x1b[2K\u009b2J\x1b]52;c;aGk=\x07\x7f\nproblem: none"
	shownDesc      = `desc = no\x1b[1A\x1b[2K\u009b2J\x1b]52;c;aGk=\a\u007f\nproblem: none`
)

func (hostileMember) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return &pb.StatusResponse{Header: &pb.ResponseHeader{ClusterId: 1, MemberId: 0xa1}, Version: hostileVersion, Leader: 0xa1}, nil
}

func (hostileMember) Range(context.Context, *pb.RangeRequest) (*pb.RangeResponse, error) {
	return nil, grpcstatus.Error(codes.FailedPrecondition, hostileDesc)
}

// startHostileMember serves a hostileMember on loopback until the test
// ends, and returns its endpoint.
func startHostileMember(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterMaintenanceServer(srv, hostileMember{})
	pb.RegisterKVServer(srv, hostileMember{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	return "http://" + l.Addr().String()
}

// Nothing a server says drives the terminal: the real arca, on a vault
// whose member answers with escape sequences and newlines, prints its
// report and its error with each of them escaped, and no line but its own.
func TestServerTextDoesNotDriveTheTerminal(t *testing.T) {
	h := newArcaHome(t)
	cfg := filepath.Join(h.dir, "hostile.toml")
	toml := fmt.Sprintf("[envs.default]\nvault = \"team\"\n[vaults.team]\nkind = \"etcd\"\nendpoints = [%q]\nprefix = \"/arca/\"\ntimeout_ms = 2000\n", startHostileMember(t))
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	h.env = append(h.env, "ARCA_CONFIG="+cfg)

	clean := func(what, s string) {
		t.Helper()
		for _, r := range s {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Errorf("%s holds %U: %q", what, r, s)
				return
			}
		}
	}

	out, st, errs := h.status(t, nil, "arca", "check")
	clean("arca check's stdout", string(out))
	clean("arca check's stderr", errs)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	switch {
	case st != 1 || errs != "":
		t.Fatalf("arca check: exit %d, stderr %q; want 1 and nothing", st, errs)
	case len(lines) != 3 || lines[0] != "env default: vault team (etcd): UNHEALTHY, 0 records" || !strings.HasPrefix(lines[2], "  problem: "):
		t.Fatalf("arca check printed %d lines, want the header, the member and one problem:\n%s", len(lines), out)
	case !strings.HasSuffix(lines[1], `, etcd "3.5.0\x1b]0;pwned\a\n  etcd member https://127.0.0.1:1 (1, leader, etcd 3.5.0) answers; leader 1") answers; leader a1`):
		t.Errorf("the member's version is not shown quoted: %q", lines[1])
	case !strings.Contains(lines[2], shownDesc):
		t.Errorf("the member's error is not shown escaped: %q", lines[2])
	}

	out, st, errs = h.status(t, nil, "arca", "get", "arca://app/db")
	clean("arca get's stderr", errs)
	if st != 1 || len(out) != 0 || strings.Count(errs, "\n") != 1 ||
		!strings.HasPrefix(errs, "arca: ") || !strings.Contains(errs, shownDesc) {
		t.Errorf("arca get: exit %d, stdout %q, stderr %q; want 1 and one line naming the error escaped", st, out, errs)
	}

	// The trail holds the error as JSON, DEL and C1 as they are: arca
	// audit --json prints its lines exactly, its table quotes them.
	trail, err := os.ReadFile(filepath.Join(h.dir, ".local/state/arca/audit.log"))
	if err != nil || !strings.Contains(string(trail), "\u009b") {
		t.Fatalf("the trail does not hold the member's error as it is (%v):\n%s", err, trail)
	}
	if out := h.run(t, nil, "arca", "audit", "--json"); string(out) != string(trail) {
		t.Errorf("arca audit --json printed\n%q\nnot the trail's lines as they are\n%q", out, trail)
	}
	out = h.run(t, nil, "arca", "audit")
	clean("arca audit", string(out))
	if strings.Count(string(out), "\n") != 3 || !strings.Contains(string(out), `\u009b2J`) {
		t.Errorf("arca audit's table is not the header and two quoted rows:\n%s", out)
	}

	out, _, _ = h.status(t, nil, "arca", "check", "--json")
	clean("arca check --json", string(out))
	var res struct{ Info, Problems []string }
	if err := json.Unmarshal(out, &res); err != nil || len(res.Info) != 1 || len(res.Problems) != 1 {
		t.Fatalf("arca check --json: %v:\n%s", err, out)
	}
	if !strings.Contains(res.Info[0], `etcd "3.5.0\x1b]0;pwned\a\n`) || !strings.Contains(res.Problems[0], hostileDesc) {
		t.Errorf("arca check --json: the member's version is not quoted, or its error not kept: %q", res)
	}

	out, st, errs = h.status(t, nil, "arca", "status")
	clean("arca status's stdout", string(out))
	clean("arca status's stderr", errs)
	if st != 0 || errs != "" || !strings.Contains(string(out), "\n  state:       PROBLEM: etcd vault /arca/ at ") ||
		!strings.Contains(string(out), shownDesc+"\n  identity: ") {
		t.Errorf("arca status: exit %d, stderr %q; want 0, nothing, and the state's problem on its line, escaped:\n%s", st, errs, out)
	}
}

// What a verb was asked for reaches stdout byte for byte, control
// characters and all: a value (get, env, export) and a child's output
// (run) are not messages.
func TestDataIsNotEscaped(t *testing.T) {
	h := newArcaHome(t)
	const value = "\x1b[31mred\x07\x7f\u0085\n"
	h.put(t, "arca://app/db", []byte(value))
	if got := string(h.run(t, nil, "arca", "get", "arca://app/db")); got != value {
		t.Errorf("arca get printed %q, want %q", got, value)
	}
	if got := string(h.run(t, nil, "arca", "run", "--", "printf", `\033]0;x\007`)); got != "\x1b]0;x\x07" {
		t.Errorf("arca run passed on %q, want the child's bytes", got)
	}
	if got := string(h.run(t, nil, "arca", "export", "--ns", "app", "--format", "dotenv")); !strings.Contains(got, "\x1b[31mred\x07") {
		t.Errorf("arca export printed %q, without the value as it is", got)
	}
}
