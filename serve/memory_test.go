package serve

import (
	"io"
	"runtime"
	"testing"
)

// hugeLine is stdin holding one line of n bytes, then tail. It allocates
// nothing while read, and samples the heap on every read, so the peak is
// seen while serve is in the middle of the line.
type hugeLine struct {
	head, tail []byte
	n          int // bytes of the line still to send after head
	fill       []byte
	peakInuse  uint64
	ms         runtime.MemStats
}

func (h *hugeLine) Read(p []byte) (int, error) {
	runtime.ReadMemStats(&h.ms)
	h.peakInuse = max(h.peakInuse, h.ms.HeapInuse)
	switch {
	case len(h.head) > 0:
		k := copy(p, h.head)
		h.head = h.head[k:]
		return k, nil
	case h.n > 0:
		k := min(len(p), h.n, len(h.fill))
		copy(p, h.fill[:k])
		h.n -= k
		return k, nil
	case len(h.tail) > 0:
		k := copy(p, h.tail)
		h.tail = h.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// TestHugeLineMemory: a 64 MiB line is answered bad_request and the next
// request is served, and the heap never grows by more than 16 MiB while
// serve reads it (the reader holds at most the 4 MiB cap and its buffer).
func TestHugeLineMemory(t *testing.T) {
	const (
		lineBytes = 64 << 20
		maxGrowth = 16 << 20
	)
	f := newFixture(t)
	head := []byte(`{"op":"put","ref":"arca://a/b","value":"`)
	tail := []byte(`"}` + "\n" + `{"op":"list","id":2}` + "\n")
	in := &hugeLine{head: head, tail: tail, n: lineBytes - len(head) - 2, fill: make([]byte, 1<<20)}
	for i := range in.fill {
		in.fill[i] = 'x'
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr := f.session(t, sessionOpts{stdin: in, sent: []byte("x\n" + `{"op":"list","id":2}` + "\n")})
	runtime.ReadMemStats(&after)
	checkReplies(t, tr, []want{bad("null", tooLong), ok("2")})
	growth := int64(in.peakInuse) - int64(before.HeapInuse)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("heap in use grew by at most %d KiB; %d KiB allocated in all", growth>>10, allocated>>10)
	if growth > maxGrowth {
		t.Errorf("the heap grew by %d MiB while serve read a 64 MiB line, want at most %d MiB", growth>>20, maxGrowth>>20)
	}
	if allocated > 2*maxGrowth {
		t.Errorf("serve allocated %d MiB to skip a 64 MiB line", allocated>>20)
	}
	if f.spy.calls["apply"] != 0 {
		t.Errorf("the oversized put reached the vault")
	}
}
