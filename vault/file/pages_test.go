package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

// pagedVault is a vault of n records whose values are size(i) bytes,
// written in one batch. It returns the names in the order of their lines in
// the file and the value of each.
func pagedVault(t *testing.T, n int, size func(i int) int) (path, idPath string, names []string, values map[string]string) {
	t.Helper()
	path, idPath = newVaultFiles(t)
	f, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	values = map[string]string{}
	var ws vault.Writes
	for i := range n {
		name := fmt.Sprintf("app/r%04d", i)
		v := fmt.Sprintf("value %d ", i)
		v += strings.Repeat("x", max(0, size(i)-len(v)))
		names, values[name] = append(names, name), v
		ws = append(ws, vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(v))})
	}
	if _, err := f.ApplyBatch(context.Background(), ws, func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(f.k.Slot(a), f.k.Slot(b)) })
	return path, idPath, names, values
}

// openPaged opens the vault reading every file by pages of pageSize bytes,
// at most budget bytes in all.
func openPaged(t *testing.T, path, idPath string, pageSize, budget int) (*Vault, error) {
	t.Helper()
	o := defaultOptions()
	o.paged = paging{from: 1, pageSize: pageSize, budget: budget}
	f, err := open(path, idPath, nil, o)
	if err == nil {
		t.Cleanup(func() { f.Close() })
	}
	return f, err
}

// pagedRead is how many bytes f's pages have read.
func pagedRead(f *Vault) int {
	n := 0
	for _, b := range f.cur.unread.read {
		n += len(b)
	}
	return n
}

// A one-shot get of a large vault reads the header, the trailer and the
// pages its search touches, and no more; every record is found with its
// value.
func TestPagedGetReadsOnlyPages(t *testing.T) {
	path, idPath, names, values := pagedVault(t, 600, func(int) int { return 32 })
	size := len(fileBytes(t, path))
	if size < pagedFrom {
		t.Fatalf("fixture of %d bytes is too small to be read by pages", size)
	}
	// The defaults read this file by pages.
	f, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := f.Get(context.Background(), names[0]); err != nil || string(r.Value.Reveal()) != values[names[0]] || f.cur.unread == nil {
		t.Fatalf("get %s: %v, a wrong value, or the record lines read whole", names[0], err)
	}
	f.Close()
	// A search of 600 lines reads at most 10 of them and the 2 either side
	// of the one found, each in at most 2 pages; the header and the trailer
	// take 2 more pages.
	const page = 256
	most := (2*(bits.Len(uint(len(names)))+2) + 2) * page
	for i, name := range names {
		f, err := openPaged(t, path, idPath, page, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.Get(context.Background(), name)
		if err != nil || string(r.Value.Reveal()) != values[name] {
			t.Fatalf("get %s (line %d): %v or a wrong value", name, i+2, err)
		}
		if f.cur.unread == nil {
			t.Fatalf("get %s: the record lines were read whole", name)
		}
		if got := pagedRead(f); got > most {
			t.Fatalf("get %s read %d bytes of %d by pages, want at most %d", name, got, size, most)
		}
		f.Close()
	}
}

// Lines longer than a page, many pages long, and of every length around a
// page's, are read across pages and checked whole.
func TestPagedGetLinesLongerThanAPage(t *testing.T) {
	path, idPath, names, values := pagedVault(t, 40, func(i int) int { return 1 + i*97%700 })
	for _, pageSize := range []int{1, 7, 64, 100, 4096} {
		for _, name := range append(slices.Clone(names), "app/missing") {
			f, err := openPaged(t, path, idPath, pageSize, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			r, err := f.Get(context.Background(), name)
			switch want, ok := values[name]; {
			case !ok && !errors.Is(err, vault.ErrNotFound):
				t.Fatalf("pages of %d: get %s: %v, want not found", pageSize, name, err)
			case ok && (err != nil || string(r.Value.Reveal()) != want):
				t.Fatalf("pages of %d: get %s: %v or a wrong value", pageSize, name, err)
			}
			f.Close()
		}
	}
}

// getResult is what a fresh handle's open and first get of name gave: the
// value, or the error.
func getResult(t *testing.T, path, idPath, name string, paged bool) string {
	t.Helper()
	var f *Vault
	var err error
	if paged {
		f, err = openPaged(t, path, idPath, 64, 1<<20)
	} else {
		f, err = open(path, idPath, nil, options{maxRead: maxVaultFile + maxVaultSlack})
	}
	if err != nil {
		return "open: " + err.Error()
	}
	defer f.Close()
	r, err := f.Get(context.Background(), name)
	if err != nil {
		return "get: " + err.Error()
	}
	return "value: " + string(r.Value.Reveal())
}

// A damaged file, read by pages, answers every get exactly as the file
// read whole does: the same value, or the same error naming the same line.
func TestPagedGetDamageAnswersAsWholeRead(t *testing.T) {
	path, idPath, names, _ := pagedVault(t, 30, func(i int) int { return 20 + i*53%300 })
	orig := fileBytes(t, path)
	head, recs, _ := splitVault(t, orig)
	for _, tc := range []struct {
		name string
		data func() []byte
	}{
		{"truncated in the trailer", func() []byte { return orig[:len(orig)-2] }},
		{"truncated in a record line", func() []byte { return orig[:len(orig)*2/3] }},
		{"truncated after the header", func() []byte { return orig[:len(head)] }},
		{"truncated in the header", func() []byte { return orig[:len(head)/2] }},
		{"no newline after the header", func() []byte { return slices.Concat(head[:len(head)-1], orig[len(head):]) }},
		{"a newline inside the header", func() []byte {
			return slices.Concat(head[:40], []byte("\n"), head[40:], orig[len(head):])
		}},
		{"the last record line without its newline", func() []byte {
			return slices.Concat(orig[:len(orig)-4], []byte("}}\n"))
		}},
		{"no record lines and no newline before the trailer", func() []byte {
			return slices.Concat(head[:len(head)-1], []byte("}}\n"))
		}},
		{"a malformed line", func() []byte {
			return bytes.Replace(orig, recs[17][:10], []byte(`"zz`), 1)
		}},
		{"a line twice", func() []byte {
			return bytes.Replace(orig, recs[9], slices.Concat(recs[9], []byte(",\n"), recs[9]), 1)
		}},
		{"two lines swapped", func() []byte {
			out := bytes.Replace(orig, recs[14], []byte("SWAP"), 1)
			out = bytes.Replace(out, recs[15], recs[14], 1)
			return bytes.Replace(out, []byte("SWAP"), recs[15], 1)
		}},
		{"a line longer than a page of garbage", func() []byte {
			return bytes.Replace(orig, recs[22], slices.Concat(recs[22][:40], bytes.Repeat([]byte("\""), 500), recs[22][40:]), 1)
		}},
		{"a blank line", func() []byte { return bytes.Replace(orig, recs[3], slices.Concat(recs[3], []byte("\n")), 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := renameOver(path, tc.data()); err != nil {
				t.Fatal(err)
			}
			for _, name := range append(slices.Clone(names), "app/missing") {
				paged, whole := getResult(t, path, idPath, name, true), getResult(t, path, idPath, name, false)
				if paged != whole {
					t.Fatalf("get %s:\n by pages: %s\n    whole: %s", name, paged, whole)
				}
			}
		})
	}
	if err := renameOver(path, orig); err != nil {
		t.Fatal(err)
	}
}

// splitVault splits a vault file into its header line (with its newline)
// and its record lines (without their comma and newline).
func splitVault(t *testing.T, data []byte) (head []byte, recs [][]byte, tail []byte) {
	t.Helper()
	nl := bytes.IndexByte(data, '\n') + 1
	body := data[nl : len(data)-len(fileTrailer)]
	for _, l := range bytes.SplitAfter(body, []byte("\n")) {
		if len(l) > 0 {
			recs = append(recs, bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte(",")))
		}
	}
	return data[:nl], recs, data[len(data)-len(fileTrailer):]
}

// A header longer than the pages may read, and a search that would read
// more than that, read the file whole: the get still answers.
func TestPagedGetPastTheBudgetReadsWhole(t *testing.T) {
	path, idPath, names, values := pagedVault(t, 50, func(int) int { return 400 })
	head, _, _ := splitVault(t, fileBytes(t, path))
	for _, tc := range []struct {
		name   string
		budget int
	}{
		{"header past the budget", len(head) / 2},
		{"search past the budget", len(head) + 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range names {
				f, err := openPaged(t, path, idPath, 64, tc.budget)
				if err != nil {
					t.Fatal(err)
				}
				r, err := f.Get(context.Background(), name)
				if err != nil || string(r.Value.Reveal()) != values[name] {
					t.Fatalf("get %s: %v or a wrong value", name, err)
				}
				if f.cur.unread != nil {
					t.Fatalf("get %s: served from pages past a budget of %d bytes", name, tc.budget)
				}
				f.Close()
			}
		})
	}
}

// A file edited in place after the open (its size or time changed: no arca
// write does that) is never served from what was read of it before: the
// get fails, saying so, and the next get reads the file again.
func TestPagedGetFileChangedUnderIt(t *testing.T) {
	path, idPath, names, values := pagedVault(t, 40, func(int) int { return 100 })
	orig := fileBytes(t, path)
	for _, tc := range []struct {
		name    string
		edit    func() error
		nextErr string // what the next get says, "" for a value
	}{
		{"truncated", func() error { return os.Truncate(path, int64(len(orig)/2)) }, "truncated"},
		{"grown", func() error { return appendTo(path, []byte("garbage")) }, "truncated"},
		{"rewritten with the same bytes", func() error { return overwrite(path, orig) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := renameOver(path, orig); err != nil {
				t.Fatal(err)
			}
			f, err := openPaged(t, path, idPath, 64, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			slot := f.k.Slot(names[7])
			if err := tc.edit(); err != nil {
				t.Fatal(err)
			}
			// The search itself, past the refresh a get starts with.
			f.mu.Lock()
			_, ok, err := f.find(slot)
			f.mu.Unlock()
			if err == nil || !strings.Contains(err.Error(), "changed while it was read") {
				t.Fatalf("find after the file was %s: found %v, %v; want it to say the vault changed", tc.name, ok, err)
			}
			r, err := f.Get(context.Background(), names[7])
			switch {
			case tc.nextErr == "" && (err != nil || string(r.Value.Reveal()) != values[names[7]]):
				t.Fatalf("the next get: %v or a wrong value", err)
			case tc.nextErr != "" && (err == nil || !strings.Contains(err.Error(), tc.nextErr)):
				t.Fatalf("the next get: %v, want %q", err, tc.nextErr)
			}
		})
	}
}

// A vault replaced by rename (every arca write) after the open leaves the
// held file as it was: its pages serve the record as it was at the open.
func TestPagedGetServesTheFileHeldAcrossARename(t *testing.T) {
	path, idPath, names, values := pagedVault(t, 40, func(int) int { return 100 })
	f, err := openPaged(t, path, idPath, 64, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, name := range names {
		if _, err := w.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte("new"))}, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	b64, ok, err := f.find(f.k.Slot(names[11]))
	var r vault.Record
	if err == nil && ok {
		r, err = f.openEntry(entry{slot: f.k.Slot(names[11]), blob: b64})
	}
	f.mu.Unlock()
	if err != nil || !ok || string(r.Value.Reveal()) != values[names[11]] {
		t.Fatalf("find in the held file: %v, %v, or not the value at the open", ok, err)
	}
	if r, err := f.Get(context.Background(), names[11]); err != nil || string(r.Value.Reveal()) != "new" {
		t.Fatalf("the next get: %v, or not the value written since", err)
	}
}

// Pages that come back short (a file shrunk since it was measured) stop
// the search with an error, never a line made of what was not read.
func TestPagesShortRead(t *testing.T) {
	lines := `"` + strings.Repeat("a", slotHexSize) + `":"x",` + "\n" + `"` + strings.Repeat("b", slotHexSize) + `":"y"` + "\n"
	for _, cut := range []int{0, 10, len(lines) / 2, len(lines) - 1} {
		p := newPages(strings.NewReader(lines[:cut]), len(lines), 16, 1<<10)
		if _, ok, err := search(p, len(lines), strings.Repeat("b", slotHexSize)); ok || !errors.Is(err, errPaged) {
			t.Errorf("lines cut at %d: found %v, %v; want a paged read that gave up", cut, ok, err)
		}
	}
	p := newPages(strings.NewReader(lines), len(lines), 16, 1<<10)
	if b, ok, err := search(p, len(lines), strings.Repeat("b", slotHexSize)); !ok || err != nil || b != "y" {
		t.Errorf("whole lines: %q, %v, %v", b, ok, err)
	}
}

// renameOver puts data at path by temp file and rename, as arca writes.
func renameOver(path string, data []byte) error {
	tmp := path + ".test"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendTo(path string, b []byte) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = fh.Write(b)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// overwrite writes b over the file at path in place, which changes its
// modification time.
func overwrite(path string, b []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	for again, err := os.Stat(path); err == nil && again.ModTime().Equal(fi.ModTime()); again, err = os.Stat(path) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
