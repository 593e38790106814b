package webpage

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A token is what a bearer header carries as it is: a byte a cookie or a
// header cannot hold is refused, and the error names the characters
// allowed, never the token.
func TestCheckToken(t *testing.T) {
	for _, tok := range []string{"abcdefgh0123456789", "A-Z.a_z~0+9/abcdefgh", "base64-padded-token==", strings.Repeat("f", 64)} {
		if err := CheckToken(tok); err != nil {
			t.Errorf("%q: %v", tok, err)
		}
	}
	for _, tok := range []string{"", "semi;colon-0123456789", `quo"te-0123456789`, `back\slash-0123456789`, "non-ascii-é-0123456789",
		"sp ace-0123456789", "comma,0123456789", "nul\x00-0123456789", "tab\t0123456789", "eq=uals-in-the-middle", "===="} {
		err := CheckToken(tok)
		if err == nil {
			t.Errorf("%q: taken", tok)
			continue
		}
		if tok != "" && (!strings.Contains(err.Error(), TokenChars) || strings.Contains(err.Error(), tok)) {
			t.Errorf("%q: %v", tok, err)
		}
	}
}

// Every header SetHeaders promises is set, and a server has its bounds.
func TestHeadersAndBounds(t *testing.T) {
	w := httptest.NewRecorder()
	SetHeaders(w.Header())
	for k, v := range map[string]string{
		"Content-Security-Policy":      CSP,
		"X-Content-Type-Options":       "nosniff",
		"Referrer-Policy":              "no-referrer",
		"Cache-Control":                "no-store",
		"Cross-Origin-Resource-Policy": "same-origin",
	} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	s := NewServer(http.NotFoundHandler())
	if s.MaxHeaderBytes != MaxHeaderBytes || s.ReadHeaderTimeout != ReadTimeout || s.ReadTimeout != ReadTimeout ||
		s.WriteTimeout != WriteTimeout || s.IdleTimeout != IdleTimeout {
		t.Errorf("server bounds: %+v", s)
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "192.168.1.2": false, "example.com": false, "localhost.": false, "LOCALHOST": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
}
