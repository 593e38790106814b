package ndjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// got is what one call to Next gave, written for a failure message.
func got(line []byte, err error) string {
	if err != nil && !errors.Is(err, ErrCut) {
		return "!" + err.Error()
	}
	if errors.Is(err, ErrCut) {
		return fmt.Sprintf("%q(cut)", line)
	}
	return fmt.Sprintf("%q", line)
}

// readAll calls Next until io.EOF, a Fail reader's ErrTooLong, or a limit.
func readAll(l *Reader) []string {
	var out []string
	for range 1000 {
		line, err := l.Next()
		if err == io.EOF {
			return out
		}
		out = append(out, got(line, err))
		if l.policy == Fail && errors.Is(err, ErrTooLong) {
			return out
		}
	}
	return append(out, "…")
}

func TestNext(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name   string
		in     string
		max    int
		policy Policy
		want   []string
	}{
		{"lines", "a\nbc\n\nd\n", 8, Resync, []string{`"a"`, `"bc"`, `""`, `"d"`}},
		{"empty stream", "", 8, Resync, nil},
		{"a last line cut", "a\nbc", 8, Resync, []string{`"a"`, `"bc"(cut)`}},
		{"at the cap", "12345678\n", 8, Resync, []string{`"12345678"`}},
		{"over the cap, resync", "123456789\nok\n", 8, Resync, []string{"!line too long", `"ok"`}},
		{"over the cap, fail", "123456789\nok\n", 8, Fail, []string{"!line too long"}},
		{"cut at the cap", "12345678", 8, Resync, []string{`"12345678"(cut)`}},
		{"cut over the cap", "123456789", 8, Resync, []string{"!line too long"}},
		{"cut over the cap, fail", "123456789", 8, Fail, []string{"!line too long"}},
		{"long lines gathered", long + "\n" + long + "\n", 64, Resync, []string{`"` + long + `"`, `"` + long + `"`}},
		{"long line over the cap skipped past the buffer", long + long + "\nok\n" + long, 64, Resync, []string{"!line too long", `"ok"`, `"` + long + `"(cut)`}},
		{"crlf is the caller's", "a\r\n", 8, Resync, []string{`"a\r"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				l := newReaderSize(r, tc.max, tc.policy, 16)
				if g := readAll(l); fmt.Sprint(g) != fmt.Sprint(tc.want) {
					t.Errorf("lines %v, want %v", g, tc.want)
				}
			}
		})
	}
}

// A Fail reader reads nothing past the line over its cap, and says so on
// every later call.
func TestFailReadsNoFurther(t *testing.T) {
	r := strings.NewReader(strings.Repeat("x", 100) + "\nnext\n")
	l := newReaderSize(r, 20, Fail, 16)
	for range 2 {
		if _, err := l.Next(); !errors.Is(err, ErrTooLong) {
			t.Fatalf("Next() = %v, want ErrTooLong", err)
		}
	}
	if r.Len() < 70 {
		t.Errorf("the reader took %d bytes of a stream it gave up on at 21", 106-r.Len())
	}
}

// A read error other than the end of the stream is returned as it is, in
// a line and while a long line is skipped.
func TestStreamError(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []string{"abc", strings.Repeat("x", 100)} {
		l := newReaderSize(io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)), 20, Resync, 16)
		if _, err := l.Next(); !errors.Is(err, boom) {
			t.Errorf("%d bytes then an error: Next() = %v, want boom", len(in), err)
		}
	}
}

// A gathered line is wiped when the next call begins: it may have held a
// value.
func TestGatheredLineWiped(t *testing.T) {
	l := newReaderSize(strings.NewReader(strings.Repeat("s", 40)+"\nok\n"), 64, Resync, 16)
	line, err := l.Next()
	if err != nil || len(line) != 40 {
		t.Fatalf("Next() = %q, %v", line, err)
	}
	if _, err := l.Next(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte("s")) {
		t.Errorf("the gathered line is still there: %q", line)
	}
}

func TestReady(t *testing.T) {
	pr, pw := io.Pipe()
	l := NewReader(pr, 100, Resync)
	if l.Ready() {
		t.Fatal("Ready before anything was written")
	}
	go pw.Write([]byte("one\ntw"))
	if line, err := l.Next(); string(line) != "one" || err != nil {
		t.Fatalf("Next() = %q, %v", line, err)
	}
	if l.Ready() || l.Buffered() != 2 {
		t.Fatalf("Ready() = %v with %d bytes buffered of a line without its newline", l.Ready(), l.Buffered())
	}
	go pw.Write([]byte("o\nthree\n"))
	if line, err := l.Next(); string(line) != "two" || err != nil {
		t.Fatalf("Next() = %q, %v", line, err)
	}
	if !l.Ready() {
		t.Fatal("not Ready with a whole line buffered")
	}
	pw.Close()
	rest, _ := io.ReadAll(l.Rest())
	if string(rest) != "three\n" {
		t.Errorf("Rest() = %q, want the buffered line", rest)
	}
}

// model is what Next must return for in: every line split at its newline.
func model(in []byte, max int, p Policy) []string {
	var out []string
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		line, cut := in, true
		if i >= 0 {
			line, cut, in = in[:i], false, in[i+1:]
		} else {
			in = nil
		}
		switch {
		case len(line) > max:
			out = append(out, "!"+ErrTooLong.Error())
			if p == Fail {
				return out
			}
		case cut:
			out = append(out, got(line, ErrCut))
		default:
			out = append(out, got(line, nil))
		}
	}
	return out
}

// chunked reads in at the sizes sizes gives, in turn: how a pipe splits a
// stream.
type chunked struct {
	in    []byte
	sizes []byte
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := len(c.in)
	if len(c.sizes) > 0 {
		n = int(c.sizes[0])%37 + 1
		c.sizes = c.sizes[1:]
	}
	n = min(n, len(p), len(c.in))
	copy(p, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}

func FuzzNext(f *testing.F) {
	f.Add([]byte("a\nbb\nccc"), []byte{1, 2, 3}, uint8(2), false)
	f.Add([]byte(strings.Repeat("x", 50)+"\nok\n"), []byte{36}, uint8(20), true)
	f.Add([]byte("\n\n\n"), []byte{}, uint8(0), false)
	f.Fuzz(func(t *testing.T, in, sizes []byte, max uint8, fail bool) {
		p := Resync
		if fail {
			p = Fail
		}
		l := newReaderSize(&chunked{in, sizes}, int(max), p, 16)
		if g, want := readAll(l), model(in, int(max), p); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Fatalf("max %d policy %d: %v, want %v", max, p, g, want)
		}
		if len(l.long) > int(max) {
			t.Fatalf("held %d bytes of a line, over the cap %d", len(l.long), max)
		}
	})
}
