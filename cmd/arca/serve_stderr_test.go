package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeStderrIsOnlyEvents: serve's stderr is the audit wire, and no
// library arca links may write to it. An HTTP decider that answers each
// request twice makes Go's HTTP client report the second, unasked
// response through the standard logger, quoting the server's bytes; arca
// sends that logger nowhere, so stderr holds the session's events alone.
func TestServeStderrIsOnlyEvents(t *testing.T) {
	h := newArcaHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const twice = "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{\"result\":false}\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 35\r\n\r\n{\"result\":true,\"reason\":\"unasked\"}\n"
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if _, err := c.Write([]byte(twice)); err != nil {
						return
					}
				}
			}()
		}
	}()
	cfg := filepath.Join(h.dir, "pdp.toml")
	body := "[serve.pdp]\nurl = \"http://" + ln.Addr().String() + "/v1/data/arca/allow\"\napi = \"opa\"\ntimeout_ms = 2000\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	in := `{"op":"get","ref":"arca://app/db","id":1}` + "\n" + `{"op":"get","ref":"arca://app/db","id":2}` + "\n" + `{"op":"get","ref":"arca://app/db","id":3}` + "\n"
	out, status, stderr := h.status(t, []byte(in), "arca", "serve", "--config", cfg)
	if status != 0 {
		t.Fatalf("serve: exit %d, stderr %q", status, stderr)
	}
	if n := bytes.Count(out, []byte("\n")); n != 3 || bytes.Contains(out, []byte(`"ok":true`)) {
		t.Errorf("replies: %s; want three, none allowed", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("stderr line that is not an event: %q", line)
		}
	}
}
