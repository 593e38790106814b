package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestProcessWhoIsTheUIDsAccountAndTheHostName(t *testing.T) {
	t.Setenv("USER", "someone-else")
	uid := strconv.Itoa(os.Getuid())
	want := uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		want = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	got := ProcessWho()
	if got.User != want || got.Host != host {
		t.Errorf("ProcessWho() = %+v, want user %q host %q", got, want, host)
	}
	if got.User == "someone-else" {
		t.Error("the user was taken from $USER")
	}
}

func TestCleanWhoEscapesAndBounds(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ana", "ana"},
		{"a\x1b[31mb\n", `a\x1b[31mb\x0a`},
		{"x\xffy", `x\xffy`},
		{"é\u0085", `é\u0085`},
		{strings.Repeat("h", 300), strings.Repeat("h", MaxWho)},
		{strings.Repeat("h", MaxWho-1) + "é", strings.Repeat("h", MaxWho-1)},
		{strings.Repeat("h", MaxWho-3) + "\x01", strings.Repeat("h", MaxWho-3)},
	} {
		got := CleanWho(Who{User: c.in, Host: c.in})
		if got.User != c.want || got.Host != c.want {
			t.Errorf("CleanWho(%q) = %q, want %q", c.in, got.User, c.want)
		}
	}
}

func TestSetWhoStampsEveryEventInItsPlace(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	w := NewWriter(&buf, SourceCLI, func() time.Time { return now })
	if err := w.Write(Event{Event: "get", Op: "get", Outcome: OK, User: "forged"}); err != nil {
		t.Fatal(err)
	}
	w.SetWho(Who{User: "ana", Host: "build-1"})
	for _, e := range []Event{{Event: "get", Op: "get", Outcome: OK, Actor: "ci", Client: "c", User: "forged", Host: "forged"}, {Event: "put", Op: "put", Outcome: OK}} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if strings.Contains(lines[0], `"host"`) {
		t.Errorf("before SetWho the writer stamped a host: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"actor":"ci","client":"c","user":"ana","host":"build-1","source":"cli","prev":"`) {
		t.Errorf("line 2 does not carry user and host just before source: %s", lines[1])
	}
	for _, l := range lines[1:] {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.User != "ana" || e.Host != "build-1" {
			t.Errorf("event %s: user %q host %q", l, e.User, e.Host)
		}
	}
}
