package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A plugin's prompt reaches the terminal, quoted; a secret is read from it
// without echo and handed to the plugin; a message is shown quoted.
func TestPluginAsksAtTerminal(t *testing.T) {
	h, _, _ := pluginHome(t)
	for _, c := range []struct {
		do, prompt, typed string
		echoed            bool
	}{
		{"ask-secret", `age-plugin-arcatest: PIN\x1b[2J for the key: `, "1234\n", false},
		{"ask-public", `age-plugin-arcatest: PIN\x1b[2J for the key: `, "1234\n", true},
		{"confirm", `age-plugin-arcatest: use the key? (1: use it, 2: refuse) `, "1\n", true},
	} {
		t.Run(c.do, func(t *testing.T) {
			s := startAtTerminal(t, h.withEnv(testPluginDoVar+"="+c.do), "get", "arca://app/db")
			s.waitFor(t, c.prompt)
			s.send(t, c.typed)
			st, screen := s.wait(t)
			if st != 0 || s.stdout.String() != "s3cret" {
				t.Fatalf("exit %d, stdout %q, the terminal showed %q", st, s.stdout.String(), screen)
			}
			if strings.Contains(screen, "\x1b") || strings.Contains(screen, strings.TrimSuffix(c.typed, "\n")) != c.echoed {
				t.Errorf("the terminal showed %q (typed %q, echo %v)", screen, c.typed, c.echoed)
			}
		})
	}
	t.Run("wrong pin", func(t *testing.T) {
		s := startAtTerminal(t, h.withEnv(testPluginDoVar+"=ask-secret"), "get", "arca://app/db")
		s.waitFor(t, "for the key: ")
		s.send(t, "9999\n")
		st, screen := s.wait(t)
		if st != 1 || !strings.Contains(screen, "plugin age-plugin-arcatest: wrong PIN") || s.stdout.Len() != 0 {
			t.Errorf("exit %d, the terminal showed %q", st, screen)
		}
	})
	t.Run("message", func(t *testing.T) {
		s := startAtTerminal(t, h.withEnv(testPluginDoVar+"=message"), "get", "arca://app/db")
		st, screen := s.wait(t)
		if want := `age-plugin-arcatest: touch the key\x1b]0;owned\a now`; st != 0 || !strings.Contains(screen, want) || strings.Contains(screen, "\x1b") {
			t.Errorf("exit %d, the terminal showed %q; want %q", st, screen, want)
		}
	})
}

// serve with a controlling terminal and its three streams on pipes, as an
// agent's host starts it from a shell: the plugin's PIN prompt is asked on
// the terminal, and stdout carries the reply and stderr the events alone.
func TestPluginServeAsksAtTerminal(t *testing.T) {
	h, _, _ := pluginHome(t)
	var stderr bytes.Buffer
	s := serveAtTerminal(t, h.withEnv(testPluginDoVar+"=ask-secret"), `{"id":1,"op":"get","ref":"arca://app/db"}`+"\n", &stderr)
	s.waitFor(t, `age-plugin-arcatest: PIN\x1b[2J for the key: `)
	s.send(t, "1234\n")
	st, screen := s.wait(t)
	if st != 0 || !strings.Contains(s.stdout.String(), `"value":"s3cret"`) || strings.Contains(screen, "1234") {
		t.Fatalf("exit %d, stdout %q, the terminal showed %q", st, s.stdout.String(), screen)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		if !json.Valid([]byte(line)) || strings.Contains(line, "PIN") || strings.Contains(line, testPluginStderr) {
			t.Errorf("serve's stderr holds a line that is not an event: %q", line)
		}
	}
}
