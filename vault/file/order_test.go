package file_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// TestFileDisorderIsCorruption: a vault whose record lines are out of
// order is corrupt to every op. The one-shot get (a fresh handle's first
// get, which binary-searches the lines) never answers not found for a
// record that is there, nor for one that is not: it reports the damage, or,
// for a record its search does not depend on the damage for, its value.
// The records the damage touches are always reported.
func TestFileDisorderIsCorruption(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(recs []string) (out []string, touched []int)
	}{
		{"two lines swapped", func(r []string) ([]string, []int) {
			r[5], r[6] = r[6], r[5]
			return r, []int{5, 6}
		}},
		{"a line moved to the end", func(r []string) ([]string, []int) {
			return append(slices.Delete(slices.Clone(r), 3, 4), r[3]), []int{3}
		}},
		{"a line moved to the start", func(r []string) ([]string, []int) {
			return append([]string{r[15]}, slices.Delete(slices.Clone(r), 15, 16)...), []int{15}
		}},
		{"a line twice", func(r []string) ([]string, []int) {
			return slices.Insert(r, 8, r[8]), []int{8}
		}},
		{"every line reversed", func(r []string) ([]string, []int) {
			slices.Reverse(r)
			return r, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, names := orderedVault(t, 20)
			head, recs, tail := recordLinesOf(t, readFile(t, v.path))
			edited, touched := tc.edit(recs)
			if err := replaceBytes(v.path, []byte(head+joinRecords(edited)+tail)); err != nil {
				t.Fatal(err)
			}
			for i, name := range names {
				mustBeCorrupt := slices.Contains(touched, i)
				oneShotGet(t, v, name, fmt.Sprintf("value %d", i), mustBeCorrupt)
			}
			oneShotGet(t, v, "app/missing", "", true)
			f := v.open(t)
			if _, err := f.List(context.Background()); err == nil || !strings.Contains(err.Error(), "corrupt") {
				t.Errorf("list: %v, want corrupt", err)
			}
			if rep, err := f.Check(context.Background()); err != nil || len(rep.Problems) == 0 {
				t.Errorf("check: %q, %v; want a problem", rep.Problems, err)
			}
		})
	}
}

// oneShotGet gets name through a fresh handle, once: it must say the vault
// is corrupt, or (unless mustBeCorrupt) return want; never not found.
func oneShotGet(t *testing.T, v fileVault, name, want string, mustBeCorrupt bool) {
	t.Helper()
	f, err := file.Open(v.path, v.idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := f.Get(context.Background(), name)
	switch {
	case errors.Is(err, vault.ErrNotFound):
		t.Errorf("get %s: not found, want the damage reported", name)
	case err != nil && !strings.Contains(err.Error(), "corrupt"):
		t.Errorf("get %s: %v, want it to say corrupt", name, err)
	case err == nil && mustBeCorrupt:
		t.Errorf("get %s of a line the damage touches: a value, want the damage reported", name)
	case err == nil && string(r.Value.Reveal()) != want:
		t.Errorf("get %s: a wrong value", name)
	}
}

// orderedVault is a vault of n records whose names are returned in the
// order of their lines in the file; record i holds "value i".
func orderedVault(t *testing.T, n int) (fileVault, []string) {
	t.Helper()
	v := newFileVault(t)
	f := v.open(t)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app/r%02d", i)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(file.SlotOf(f, a), file.SlotOf(f, b)) })
	for i, name := range names {
		w := vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret(fmt.Appendf(nil, "value %d", i))}
		if _, err := f.Apply(context.Background(), w, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	return v, names
}

// recordLinesOf splits a vault file into its header line, its record lines
// (without their commas) and its trailer.
func recordLinesOf(t *testing.T, data []byte) (head string, recs []string, tail string) {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	if len(lines) < 4 || lines[len(lines)-2] != "}}" {
		t.Fatalf("unexpected vault layout: %d lines", len(lines))
	}
	for _, l := range lines[1 : len(lines)-2] {
		recs = append(recs, strings.TrimSuffix(l, ","))
	}
	return lines[0] + "\n", recs, "}}\n"
}

// joinRecords lays record lines out as the file does: a comma after every
// line but the last.
func joinRecords(recs []string) string {
	return strings.Join(recs, ",\n") + "\n"
}
