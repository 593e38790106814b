package file_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// TestFileRecordSwaps: a sealed record authenticates only in its own slot of
// its own vault. Moving one, each a genuine record, is an error on Get and
// a problem for Check, never the other record's value.
func TestFileRecordSwaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, a, b fileVault, fa, fb *file.Vault) []byte
	}{
		{"swap two records of one vault", func(t *testing.T, a, _ fileVault, fa, _ *file.Vault) []byte {
			data := readFile(t, a.path)
			one, two := blobOf(t, data, file.SlotOf(fa, "app/one")), blobOf(t, data, file.SlotOf(fa, "app/two"))
			data = setBlob(t, data, file.SlotOf(fa, "app/one"), two)
			return setBlob(t, data, file.SlotOf(fa, "app/two"), one)
		}},
		{"records from another vault", func(t *testing.T, a, b fileVault, fa, fb *file.Vault) []byte {
			data, other := readFile(t, a.path), readFile(t, b.path)
			for _, name := range []string{"app/one", "app/two"} {
				data = setBlob(t, data, file.SlotOf(fa, name), blobOf(t, other, file.SlotOf(fb, name)))
			}
			return data
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoRecordVault(t), twoRecordVault(t)
			fa, fb := a.open(t), b.open(t)
			if err := replaceBytes(a.path, tc.edit(t, a, b, fa, fb)); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"app/one", "app/two"} {
				if r, err := fa.Get(context.Background(), name); err == nil {
					t.Errorf("Get(%s) of a moved record returned %d bytes", name, r.Value.Len())
				}
			}
			rep, err := fa.Check(context.Background())
			if err != nil || len(rep.Problems) != 2 {
				t.Errorf("Check: %q %v, want a problem for each record", rep.Problems, err)
			}
		})
	}
}

// twoRecordVault is a vault with app/one and app/two, under an identity of
// its own.
func twoRecordVault(t *testing.T) fileVault {
	t.Helper()
	v := newFileVault(t)
	f := v.open(t)
	for name, value := range map[string]string{"app/one": "value one", "app/two": "value two"} {
		if _, err := f.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// blobOf returns the base64 sealed record in slot's line of data.
func blobOf(t *testing.T, data []byte, slot string) []byte {
	t.Helper()
	start, end := blobSpan(t, data, slot)
	return bytes.Clone(data[start:end])
}

// setBlob returns data with slot's sealed record replaced by blob.
func setBlob(t *testing.T, data []byte, slot string, blob []byte) []byte {
	t.Helper()
	start, end := blobSpan(t, data, slot)
	return bytes.Join([][]byte{data[:start], blob, data[end:]}, nil)
}

func blobSpan(t *testing.T, data []byte, slot string) (start, end int) {
	t.Helper()
	i := bytes.Index(data, []byte("\n\""+slot+`":"`))
	if i < 0 {
		t.Fatalf("slot %s not in the file", slot)
	}
	start = i + len(slot) + 5
	return start, start + bytes.IndexByte(data[start:], '"')
}
