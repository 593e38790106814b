package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// osWho is who the OS says runs the test: the account of its uid (the uid
// when it has none) and the host name.
func osWho(t *testing.T) (string, string) {
	t.Helper()
	uid := strconv.Itoa(os.Getuid())
	name := uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return name, host
}

// whoCLI is the process's own cli (processCLI: who from the OS) in a fresh
// home, whose $USER claims someone else.
func whoCLI(t *testing.T, stdin string) (*cli, *bytes.Buffer, string) {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "USER": "someone-else", "LOGNAME": "someone-else", "HOSTNAME": "elsewhere"}
	c := processCLI(time.Now)
	errb := &bytes.Buffer{}
	c.stdin, c.stdout, c.stderr = strings.NewReader(stdin), &bytes.Buffer{}, errb
	c.getenv = func(k string) string { return env[k] }
	c.environ = func() []string { return []string{"HOME=" + home} }
	return c, errb, home
}

func eventsOf(t *testing.T, text string) []audit.Event {
	t.Helper()
	var evs []audit.Event
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var e audit.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		evs = append(evs, e)
	}
	return evs
}

func TestCLIEventsCarryTheProcesssUserAndHost(t *testing.T) {
	wantUser, wantHost := osWho(t)
	c, errb, home := whoCLI(t, "s3cret")
	for _, args := range [][]string{{"init"}, {"put", "arca://app/db"}, {"get", "arca://app/db"}, {"get", "arca://app/nope"}} {
		c.main(context.Background(), args)
	}
	b, err := os.ReadFile(filepath.Join(home, ".local/state/arca/audit.log"))
	if err != nil {
		t.Fatalf("%v (%s)", err, errb)
	}
	evs := eventsOf(t, string(b))
	if len(evs) != 3 {
		t.Fatalf("%d events:\n%s", len(evs), b)
	}
	for _, e := range evs {
		if e.User != wantUser || e.Host != wantHost {
			t.Errorf("%s event: user %q host %q, want %q %q", e.Event, e.User, e.Host, wantUser, wantHost)
		}
	}
}

func TestServeStartCarriesTheProcesssUserAndHost(t *testing.T) {
	wantUser, wantHost := osWho(t)
	c, errb, _ := whoCLI(t, "")
	if st := c.main(context.Background(), []string{"init"}); st != 0 {
		t.Fatalf("init: %d %s", st, errb)
	}
	errb.Reset()
	c.stdin = strings.NewReader(`{"id":1,"op":"list"}` + "\n")
	if st := c.main(context.Background(), []string{"serve"}); st != 0 {
		t.Fatalf("serve: %d %s", st, errb)
	}
	evs := eventsOf(t, errb.String())
	if len(evs) != 3 || evs[0].Event != "start" || evs[1].Event != "list" {
		t.Fatalf("the wire:\n%s", errb)
	}
	if evs[0].User != wantUser || evs[0].Host != wantHost {
		t.Errorf("start: user %q host %q, want %q %q", evs[0].User, evs[0].Host, wantUser, wantHost)
	}
	for _, e := range evs[1:] {
		if e.User != "" || e.Host != "" {
			t.Errorf("%s event carries user %q host %q: a request names its actor", e.Event, e.User, e.Host)
		}
	}
}
