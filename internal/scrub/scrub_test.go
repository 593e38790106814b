package scrub

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func mustSet(t *testing.T, kv ...string) *Set {
	t.Helper()
	s := NewSet()
	for i := 0; i < len(kv); i += 2 {
		if err := s.Add(kv[i], []byte(kv[i+1])); err != nil {
			t.Fatalf("Add %s: %v", kv[i], err)
		}
	}
	return s
}

// everyCut checks that text scrubs to want whole and cut at every byte.
func everyCut(t *testing.T, s *Set, text, want string) {
	t.Helper()
	if got, _ := s.Scrub([]byte(text)); string(got) != want {
		t.Errorf("%q: %q, want %q", text, got, want)
	}
	cuts := make([]int, 0, len(text))
	for c := 1; c < len(text); c++ {
		cuts = append(cuts, c)
	}
	if got, _ := chunked(t, s, []byte(text), cuts); string(got) != want {
		t.Errorf("%q a byte a write: %q, want %q", text, got, want)
	}
}

// TestShortValues: a value of 3 bytes is refused and listed, and never
// redacted; one of 4 to 6 bytes is redacted only where neither neighbour
// is a letter or digit; one of 7 anywhere.
func TestShortValues(t *testing.T) {
	s := NewSet()
	if err := s.Add("S3", []byte("k3y")); !errors.Is(err, ErrTooShort) {
		t.Fatalf("3 bytes: %v", err)
	}
	if u := s.Unscrubbable(); len(u) != 1 || u[0] != "S3" {
		t.Errorf("Unscrubbable %q", u)
	}
	everyCut(t, s, "k3y (k3y)", "k3y (k3y)")
	for _, v := range []string{"p4ss", "p4ss5", "p4ss56"} {
		s := mustSet(t, "V", v)
		for _, tc := range [][2]string{
			{v, "<redacted:V>"},
			{"x=" + v + ";", "x=<redacted:V>;"},
			{"(" + v + ")\n" + v, "(<redacted:V>)\n<redacted:V>"},
			{"é" + v + "é", "é<redacted:V>é"}, // bytes over 0x7f are not letters here
			{"a" + v, "a" + v},
			{v + "b", v + "b"},
			{"1" + v + " " + v + "Z", "1" + v + " " + v + "Z"},
		} {
			everyCut(t, s, tc[0], tc[1])
		}
	}
	s = mustSet(t, "V", "p4ss567")
	everyCut(t, s, "ap4ss567b p4ss567", "a<redacted:V>b <redacted:V>")
}

// TestOverlappingValuesLeaveNoByte: values that overlap, touch, or lie
// one inside the other become one placeholder naming each value once, in
// the order their first occurrences start, and count once each.
func TestOverlappingValuesLeaveNoByte(t *testing.T) {
	s := mustSet(t, "A", "xxxxSECRET", "B", "SECRETyyyy", "C", "zzzzzzzz", "D", "SECRETyy")
	for _, tc := range [][2]string{
		{"[xxxxSECRETyyyy]", "[<redacted:A+B+D>]"},
		{"[SECRETyyyyxxxxSECRET]", "[<redacted:B+D+A>]"}, // touching
		{"[zzzzzzzzxxxxSECRET zzzzzzzz]", "[<redacted:C+A> <redacted:C>]"},
		{"zzzzzzzzzzzzzzzzzz", "<redacted:C>"}, // a value overlapping itself
		{"xxxxSECRETyy", "<redacted:A+D>"},
	} {
		everyCut(t, s, tc[0], tc[1])
	}
	_, rs := s.Scrub([]byte("xxxxSECRETyyyy, SECRETyyyy"))
	want := []Redaction{{"A", 1}, {"B", 2}, {"D", 2}}
	if !equalRedactions(rs, want) {
		t.Errorf("redactions %v, want %v", rs, want)
	}
	// Two labels, one value: the first added names it; a value added
	// again is not counted again against MaxValues.
	s = mustSet(t, "ns/a", "same-value", "ns/b", "same-value")
	everyCut(t, s, "same-value", "<redacted:ns/a>")
	for range MaxValues {
		if err := s.Add("ns/a", []byte("same-value")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPEMKeyLineByLine: a multi-line key printed a line a write is one
// placeholder; printed with other line endings, or indented, every line
// of it is redacted and only the line endings and indents stay.
func TestPEMKeyLineByLine(t *testing.T) {
	var key strings.Builder
	key.WriteString("-----BEGIN PRIVATE KEY-----\n")
	body := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", 8)
	for i := 0; i < len(body); i += 64 {
		key.WriteString(body[i:min(i+64, len(body))] + "\n")
	}
	key.WriteString("-----END PRIVATE KEY-----\n")
	s := mustSet(t, "tls/key", key.String())
	lines := strings.SplitAfter(strings.TrimSuffix(key.String(), "\n"), "\n")
	lines[len(lines)-1] += "\n"
	for name, tc := range map[string]struct {
		sep, indent string
		want        func(n int) string
	}{
		"as it is": {"\n", "", func(int) string { return "<redacted:tls/key>" }},
		"crlf":     {"\r\n", "", func(n int) string { return strings.Repeat("<redacted:tls/key>\r\n", n) }},
		"indented": {"\n", "    ", func(n int) string { return strings.Repeat("    <redacted:tls/key>\n", n) }},
	} {
		var out bytes.Buffer
		st := s.NewStream(&out)
		for _, l := range lines {
			if _, err := st.Write([]byte(tc.indent + strings.TrimSuffix(l, "\n") + tc.sep)); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if want := tc.want(len(lines)); out.String() != want {
			t.Errorf("%s: %q, want %q", name, out.String(), want)
		}
	}
}

// TestHoldBack: a Stream passes on at once the bytes no form could
// start in; it holds back at most the longest form less one byte (a
// 32-byte value's hex, 64 bytes: 63 of it held back), which the next
// write releases when it does not complete the form; of a union still
// open, nothing; Close passes on the rest.
func TestHoldBack(t *testing.T) {
	v := strings.Repeat("0123456789abcdef", 2)
	h := hex.EncodeToString([]byte(v))
	s := mustSet(t, "K", v)
	var out bytes.Buffer
	st := s.NewStream(&out)
	text := strings.Repeat("text ", 200)
	_, _ = st.Write([]byte(text))
	if out.String() != text {
		t.Errorf("passed on %d of %d bytes, want all", out.Len(), len(text))
	}
	_, _ = st.Write([]byte(h[:63]))
	if out.String() != text {
		t.Errorf("of the hex but its last byte, passed on %q", out.String()[len(text):])
	}
	_, _ = st.Write([]byte("x "))
	if want := text + h[:63] + "x "; out.String() != want {
		t.Errorf("after the hex was not completed: %q", out.String()[len(text):])
	}
	text += h[:63] + "x "
	_, _ = st.Write([]byte(v))
	if out.String() != text {
		t.Errorf("with a union open, passed on %q", out.String()[len(text)-5:])
	}
	_, _ = st.Write([]byte("!"))
	if want := text + "<redacted:K>!"; out.String() != want {
		t.Errorf("after the union: %q", out.String()[len(text)-5:])
	}
	_, _ = st.Write([]byte("012345678"))
	_ = st.Close()
	if want := text + "<redacted:K>!012345678"; out.String() != want {
		t.Errorf("after Close: %q", out.String()[len(text)-5:])
	}
}

// TestHoldBackOfTheLongestForm: a value of control characters has its
// longest form in JSON, six bytes a byte: a Stream holds back that less
// one byte.
func TestHoldBackOfTheLongestForm(t *testing.T) {
	v := "\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f"
	form := `\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u000e\u000f`
	s := mustSet(t, "K", v)
	var out bytes.Buffer
	st := s.NewStream(&out)
	text := strings.Repeat("text ", 20) + `{"k":"`
	_, _ = st.Write([]byte(text + form[:len(form)-1]))
	if out.String() != text {
		t.Errorf("passed on %q, want %q", out.String(), text)
	}
	_, _ = st.Write([]byte(form[len(form)-1:] + `"}`))
	_ = st.Close()
	if want := text + `<redacted:K>"}`; out.String() != want {
		t.Errorf("%q, want %q", out.String(), want)
	}
}

// TestBounds: each bound refuses with an error that names it and holds no
// byte of the value; a refused value is not registered.
func TestBounds(t *testing.T) {
	s := NewSet()
	long := bytes.Repeat([]byte("v"), MaxValueLen+1)
	if err := s.Add("K", long); err == nil || !strings.Contains(err.Error(), "MaxValueLen") || strings.Contains(err.Error(), "vvvv") {
		t.Errorf("long value: %v", err)
	}
	for _, l := range []string{"", strings.Repeat("l", MaxLabelLen+1), "a>b", "a+b", "a\nb", "<a"} {
		if err := s.Add(l, []byte("value")); err == nil {
			t.Errorf("label %q accepted", l)
		}
	}
	var err error
	for i := 0; err == nil && i < 100; i++ { // random bytes: every form long
		v := make([]byte, MaxValueLen)
		for j := range v {
			v[j] = byte(j*7 + i*13 + j/251)
		}
		err = s.Add("big"+strconv.Itoa(i), v)
	}
	if err == nil || !strings.Contains(err.Error(), "MaxFormBytes") {
		t.Errorf("forms: %v", err)
	}
	s = NewSet()
	for i := range MaxValues {
		if err := s.Add("k", fmt.Appendf(nil, "value-%05d.", i)); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	if err := s.Add("k", fmt.Appendf(nil, "value-%05d.", MaxValues)); err == nil || !strings.Contains(err.Error(), "MaxValues") {
		t.Errorf("one value too many: %v", err)
	}
	if got, _ := s.Scrub(fmt.Appendf(nil, "value-%05d.", MaxValues)); string(got) != fmt.Sprintf("value-%05d.", MaxValues) {
		t.Errorf("a refused value was registered: %q", got)
	}
}

// TestAddWhileStreaming: values added from another goroutine while a
// Stream writes apply to what the Stream has not passed on yet.
func TestAddWhileStreaming(t *testing.T) {
	s := mustSet(t, "first", "first-value")
	var out bytes.Buffer
	st := s.NewStream(&out)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			_ = s.Add("v"+strconv.Itoa(i), []byte("later-value-"+strconv.Itoa(i)+"."))
		}
	}()
	for range 50 {
		_, _ = st.Write([]byte("first-value text "))
	}
	<-done
	_, _ = st.Write([]byte("later-value-49."))
	_ = st.Close()
	if bytes.Contains(out.Bytes(), []byte("first-value")) || !bytes.HasSuffix(out.Bytes(), []byte("<redacted:v49>")) {
		t.Errorf("output %q", out.Bytes())
	}
}
