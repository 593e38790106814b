package file_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/arca-secrets/arca/vault/file"

	"github.com/arca-secrets/arca/vault"
)

// TestFileBitFlips flips every bit pattern 0x01 and 0x80 at every offset of
// a small vault. No flip may ever produce a wrong value, and every flip must
// be detected: by OpenFile, by Get, or by Check. A flip inside a record's
// line must make Get of that record fail, or, in its history part, Chain.
// The flips that may go unnoticed are of a generation digit into another
// digit, and of a character of the header's commit marks into another a
// mark may hold: neither is sealed, and they serve only what changes
// reports (TestGenerationTampered, TestCommitMarksParsedStrictly).
func TestFileBitFlips(t *testing.T) {
	v := newFileVault(t)
	// Sealed, "value one!" ends in one "=" of base64 padding and "value
	// two" in two.
	records := map[string]string{"app/one": "value one!", "app/two": "value two"}
	w := v.open(t)
	put := func(name string) {
		if _, err := w.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(records[name]))}, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	put("app/two")
	var orig []byte
	var lines spans
	// Reseal app/one until its base64 ends in 0, 4 or 8 before the "=":
	// flipping bit 0x01 of that character changes only padding bits, which
	// a lax base64 decoder ignores.
	for range 500 {
		put("app/one")
		var err error
		if orig, err = os.ReadFile(v.path); err != nil {
			t.Fatal(err)
		}
		lines = recordLines(t, w, orig, records)
		if paddingBitsAt(orig, lines, "app/one") {
			break
		}
	}
	if !paddingBitsAt(orig, lines, "app/one") {
		t.Fatal("app/one never sealed to a blob ending in [048]=")
	}
	// A handle that stays open across flips rereads the file each time,
	// which is a different path from a fresh OpenFile.
	held := v.open(t)
	marksFrom := bytes.Index(orig, []byte(`"commits":[`))
	marksTo := marksFrom + bytes.IndexByte(orig[marksFrom:], ']')
	if marksFrom < 0 {
		t.Fatal("the header holds no commit marks")
	}

	failures := 0
	for off := range orig {
		for _, mask := range []byte{0x01, 0x80} {
			flipped := bytes.Clone(orig)
			flipped[off] ^= mask
			if err := replaceBytes(v.path, flipped); err != nil {
				t.Fatal(err)
			}
			owner, part := lines.owner(off)
			if part == partGen && '0' <= flipped[off] && flipped[off] <= '9' {
				continue // checked by TestGenerationTampered
			}
			if marksFrom < off && off < marksTo && bytes.IndexByte([]byte("0123456789abcdef"), flipped[off]) >= 0 {
				continue // checked by TestCommitMarksParsedStrictly
			}
			for _, msg := range judgeFlip(v, held, records, owner, part) {
				if failures++; failures <= 20 {
					t.Errorf("flip 0x%02x at offset %d (%q): %s", mask, off, orig[off], msg)
				}
			}
		}
	}
	if failures > 20 {
		t.Errorf("… %d failures in all", failures)
	}
}

// judgeFlip returns what is wrong with how the vault at v, as flipped,
// behaves through held and through a fresh OpenFile. owner is the name of
// the record whose line holds the flip, "" for none.
func judgeFlip(v fileVault, held *file.Vault, records map[string]string, owner string, part linePart) []string {
	problems := readsOrFails("held handle", held, records, owner, part)
	if !reportsProblem(held) {
		problems = append(problems, "Check on the held handle reports no problem")
	}
	fresh, err := file.Open(v.path, v.idPath, nil)
	if err != nil {
		return problems
	}
	defer fresh.Close()
	problems = append(problems, readsOrFails("fresh handle", fresh, records, owner, part)...)
	if !reportsProblem(fresh) {
		problems = append(problems, "OpenFile succeeds and Check reports no problem")
	}
	return problems
}

// readsOrFails checks that every Get returns the original value or an error,
// and an error for owner, or for a flip in its history part an error of
// Chain.
func readsOrFails(what string, s vault.Store, records map[string]string, owner string, part linePart) []string {
	var problems []string
	for name, value := range records {
		r, err := s.Get(context.Background(), name)
		switch {
		case err == nil && string(r.Value.Reveal()) != value:
			problems = append(problems, fmt.Sprintf("%s: Get(%s) returned a WRONG VALUE", what, name))
		case err == nil && name == owner && part == partGet:
			problems = append(problems, fmt.Sprintf("%s: Get(%s) succeeded though its line was flipped", what, name))
		}
		if name == owner && part == partHistory {
			if _, err := s.Chain(context.Background(), name); err == nil {
				problems = append(problems, fmt.Sprintf("%s: Chain(%s) succeeded though its history part was flipped", what, name))
			}
		}
	}
	return problems
}

func reportsProblem(s vault.Store) bool {
	rep, err := s.Check(context.Background())
	return err != nil || len(rep.Problems) > 0
}

// spans maps byte ranges of the file to the records whose lines they are.
type spans []struct {
	start, end int
	name       string
	gen, hist  int // where the line's generation and history part start
	histEnd    int // where its history part ends
}

// linePart is what a byte of a record line is to a read.
type linePart int

const (
	partGet     linePart = iota // read by a get: frame, slot, current record, separators
	partGen                     // a digit of the generation
	partHistory                 // the history part, read by Chain
)

func (s spans) owner(off int) (string, linePart) {
	for _, sp := range s {
		switch {
		case off < sp.start || off >= sp.end:
			continue
		case sp.gen <= off && off < sp.hist-1:
			return sp.name, partGen
		case sp.hist <= off && off < sp.histEnd:
			return sp.name, partHistory
		}
		return sp.name, partGet
	}
	return "", partGet
}

// recordLines finds the line of each record in data, newline included.
func recordLines(t *testing.T, f *file.Vault, data []byte, records map[string]string) spans {
	t.Helper()
	var out spans
	for name := range records {
		slot := []byte(`"` + file.SlotOf(f, name) + `":`)
		i := bytes.Index(data, slot)
		if i < 0 || data[i-1] != '\n' {
			t.Fatalf("no line for %s", name)
		}
		end := i + bytes.IndexByte(data[i:], '\n') + 1
		line := data[i:end]
		gen := bytes.IndexByte(line, '.') + 1
		hist := gen + bytes.IndexByte(line[gen:], '.') + 1
		if gen == 0 || hist == gen {
			t.Fatalf("the line of %s holds no history", name)
		}
		histEnd := hist + bytes.IndexByte(line[hist:], '"')
		out = append(out, struct {
			start, end int
			name       string
			gen, hist  int
			histEnd    int
		}{i, end, name, i + gen, i + hist, i + histEnd})
	}
	return out
}

// paddingBitsAt reports whether name's current record ends in [048]=.
func paddingBitsAt(data []byte, lines spans, name string) bool {
	for _, sp := range lines {
		if sp.name == name {
			cur := data[sp.start : sp.gen-1] // the line up to the current record's end
			return bytes.HasSuffix(cur, []byte(`0=`)) || bytes.HasSuffix(cur, []byte(`4=`)) || bytes.HasSuffix(cur, []byte(`8=`))
		}
	}
	return false
}
