package file

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// sampleVault returns the text of a valid vault with three records.
func sampleVault(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	path, idPath := filepath.Join(dir, "v", "test.vault"), filepath.Join(dir, "id", "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"a/1", "a/2", "a/3"} {
		w := vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte("v"))}
		if _, err := f.Apply(context.Background(), w, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseVaultRejects lists the ways a file can differ from the canonical
// layout, equivalent JSON included; each is a corrupt vault.
func TestParseVaultRejects(t *testing.T) {
	good := sampleVault(t)
	if _, err := parseIndexed(good); err != nil {
		t.Fatalf("the sample vault does not parse: %v", err)
	}
	lines := strings.Split(good, "\n") // header, 3 records, "}}", ""
	rec := func(i int) string { return strings.TrimSuffix(lines[i], ",") }
	vaultID := between(lines[0], `"vault_id":"`, `"`)
	for _, tc := range []struct{ name, text string }{
		{"empty", ""},
		{"header only", lines[0] + "\n"},
		{"no trailer", strings.TrimSuffix(good, "}}\n")},
		{"no final newline", strings.TrimSuffix(good, "\n")},
		{"trailing data", good + "x"},
		{"crlf", strings.ReplaceAll(good, "\n", "\r\n")},
		{"spaces", strings.Replace(good, `{"arca_vault":{`, `{"arca_vault": {`, 1)},
		{"header key case", strings.Replace(good, `"format"`, `"Format"`, 1)},
		{"header unknown key", strings.Replace(good, `"format"`, `"extra":1,"format"`, 1)},
		{"header duplicate key", strings.Replace(good, `"format":"arca-vault/2"`, `"format":"arca-vault/2","format":"arca-vault/2"`, 1)},
		{"header escaped char", strings.Replace(good, `"format":"arca-vault/2"`, `"format":"arca-vault\/2"`, 1)},
		{"other format", strings.Replace(good, `arca-vault/2`, `arca-vault/3`, 1)},
		{"uppercase vault id", strings.Replace(good, vaultID, strings.ToUpper(vaultID), 1)},
		{"short vault id", strings.Replace(good, vaultID, vaultID[2:], 1)},
		// The whole slot: 32 hex digits are all decimal once in 3 million
		// vaults, where its first 8 were once in 40 and the case went flaky.
		{"uppercase slot", strings.Replace(good, lines[1][:33], strings.ToUpper(lines[1][:33]), 1)},
		{"duplicate record", join(lines[0], lines[1], lines[1], lines[2], lines[3], lines[4])},
		{"records out of order", join(lines[0], lines[2], lines[1], lines[3], lines[4])},
		{"comma after last record", join(lines[0], lines[1], lines[2], lines[3]+",", lines[4])},
		{"no comma between records", join(lines[0], rec(1), lines[2], lines[3], lines[4])},
		{"two records on a line", join(lines[0], lines[1]+rec(2)+",", lines[3], lines[4])},
		{"empty blob", join(lines[0], lines[1], lines[2][:36]+`",`, lines[3], lines[4])},
		{"escape in blob", join(lines[0], strings.Replace(lines[1], `":"`, `":"\u0041`, 1), lines[2], lines[3], lines[4])},
		{"blank line", join(lines[0], "", lines[1], lines[2], lines[3], lines[4])},
		// The line forms of line.go: "<current>.<gen>.<history>" or "<current>".
		{"gen with a leading zero", withBlob(lines, 1, func(c, g, h string) string { return c + ".0" + g + "." + h })},
		{"gen zero", withBlob(lines, 1, func(c, _, h string) string { return c + ".0." + h })},
		{"gen signed", withBlob(lines, 1, func(c, g, h string) string { return c + ".+" + g + "." + h })},
		{"gen not decimal", withBlob(lines, 1, func(c, _, h string) string { return c + ".a." + h })},
		{"gen empty", withBlob(lines, 1, func(c, _, h string) string { return c + ".." + h })},
		{"gen past 64 bits", withBlob(lines, 1, func(c, _, h string) string { return c + ".18446744073709551616." + h })},
		{"no history part", withBlob(lines, 1, func(c, g, _ string) string { return c + "." + g + "." })},
		{"no gen", withBlob(lines, 1, func(c, _, h string) string { return c + "." + h })},
		{"a fourth part", withBlob(lines, 1, func(c, g, h string) string { return c + "." + g + "." + h + "." + h })},
		{"empty line form", withBlob(lines, 1, func(string, string, string) string { return ".." })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.text == good {
				t.Fatal("the mutation changed nothing")
			}
			if _, err := parseIndexed(tc.text); err == nil {
				t.Error("parseIndexed accepted it")
			}
		})
	}
}

// withBlob is the vault of lines with the blob of line i, a line of the
// form "<current>.<gen>.<history>", made again by fn from its parts.
func withBlob(lines []string, i int, fn func(cur, gen, hist string) string) string {
	out := slices.Clone(lines)
	start := 1 + slotHexSize + len(`":"`)
	end := strings.LastIndexByte(out[i], '"')
	parts := strings.Split(out[i][start:end], ".")
	out[i] = out[i][:start] + fn(parts[0], parts[1], parts[2]) + out[i][end:]
	return strings.Join(out, "\n")
}

func between(s, start, end string) string {
	i := strings.Index(s, start) + len(start)
	return s[i : i+strings.Index(s[i:], end)]
}

func join(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestDecodeBlobIsStrict(t *testing.T) {
	// "QUI=" and "QUJ=" differ only in padding bits: both are [0x41 0x42]
	// to a lax decoder.
	if _, err := decodeBlob("QUI="); err != nil {
		t.Fatalf("canonical base64: %v", err)
	}
	for _, b64 := range []string{"QUJ=", "QUI", "QU\nI=", "QU\rI=", "QUI=\r", "QUI==", ""} {
		if b, err := decodeBlob(b64); err == nil && len(b) > 0 {
			t.Errorf("decodeBlob(%q) accepted non-canonical base64", b64)
		}
	}
}

// FuzzParseVault: parsing never panics, and whatever parses is canonical:
// writing it back gives the same bytes.
func FuzzParseVault(f *testing.F) {
	good := sampleVault(f)
	f.Add(good)
	f.Add(strings.SplitAfter(good, "\n")[0] + "}}\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parseIndexed(text)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := writeVault(&out, &c, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		if out.String() != text {
			t.Errorf("parsed vault is not canonical:\n in: %q\nout: %q", text, out.String())
		}
	})
}

// parseIndexed reads a vault file the way a long-lived handle does: the
// frame, then every record line.
func parseIndexed(data string) (contents, error) {
	c, err := parseVault(data)
	if err == nil {
		err = c.index()
	}
	return c, err
}

func TestFindSearchesUnindexedLines(t *testing.T) {
	var lines strings.Builder
	var slots []string
	for i := range 50 {
		slot := fmt.Sprintf("%032x", i*7919)
		slots = append(slots, slot)
		fmt.Fprintf(&lines, "%q:%q", slot, fmt.Sprintf("blob%d", i))
		if i < 49 {
			lines.WriteString(",")
		}
		lines.WriteString("\n")
	}
	c := contents{raw: lines.String()}
	for i, slot := range slots {
		blob, ok, err := c.find(slot)
		if err != nil || !ok || blob != fmt.Sprintf("blob%d", i) {
			t.Fatalf("find(%s) = %q, %v, %v", slot, blob, ok, err)
		}
	}
	for _, missing := range []string{strings.Repeat("0", 31) + "1", strings.Repeat("f", 32), fmt.Sprintf("%032x", 7919*3+1)} {
		if _, ok, err := c.find(missing); ok || err != nil {
			t.Fatalf("find(%s) found it or failed: %v", missing, err)
		}
	}
	bad := contents{raw: "\"zz\":\"x\"\n"}
	if _, _, err := bad.find(slots[0]); err == nil {
		t.Fatal("a malformed line read while searching was not reported")
	}
	// The first and last lines swapped: no search may miss them quietly.
	rec := strings.SplitAfter(lines.String(), "\n")
	rec[0], rec[49] = strings.TrimSuffix(rec[49], "\n")+",\n", strings.TrimSuffix(rec[0], ",\n")+"\n"
	swapped := contents{raw: strings.Join(rec, "")}
	for _, slot := range []string{slots[0], slots[49], strings.Repeat("f", 32)} {
		if _, ok, err := swapped.find(slot); err == nil {
			t.Errorf("find(%s) in swapped lines: found %v, no error", slot, ok)
		}
	}
}

func TestIndexHandlesSharedSlotPrefixes(t *testing.T) {
	prefix := strings.Repeat("ab", 8) // 64 bits shared by every slot below
	a, b, c := prefix+strings.Repeat("0", 16), prefix+strings.Repeat("1", 16), prefix+strings.Repeat("2", 16)
	other := strings.Repeat("cd", 16)
	ct := contents{indexed: true, byPrefix: map[uint64]entry{}}
	want := map[string]string{}
	check := func(step string) {
		t.Helper()
		for _, s := range []string{a, b, c, other} {
			blob, ok, err := ct.find(s)
			if err != nil || ok != (want[s] != "") || blob != want[s] {
				t.Fatalf("%s: find(%s) = %q, %v, %v; want %q", step, s[len(s)-4:], blob, ok, err, want[s])
			}
		}
	}
	for _, step := range []struct{ slot, blob string }{
		{b, "B"}, {a, "A"}, {c, "C"}, {other, "O"}, {a, "A2"}, {b, ""}, {a, ""}, {c, "C2"}, {c, ""}, {a, "A3"},
	} {
		ct.set(step.slot, step.blob)
		want[step.slot] = step.blob
		check("set " + step.slot[len(step.slot)-4:] + "=" + step.blob)
	}
	// The same through apply, several changes at once (a batch).
	for _, changes := range [][]entry{
		{{a, "A4", 0}, {b, "B2", 0}, {c, "C3", 0}}, {{a, "", 0}, {b, "", 0}, {other, "O2", 0}}, {{b, "B3", 0}, {c, "", 0}}, {{a, "A5", 0}, {b, "", 0}},
	} {
		ct.apply(changes)
		for _, ch := range changes {
			want[ch.slot] = ch.blob
		}
		check(fmt.Sprintf("apply %d changes", len(changes)))
	}
}

// The file format carries no key history: a header with one is refused.
func TestHeaderWithChainRefused(t *testing.T) {
	if _, err := parseHeader(`{"arca_vault":{"format":"arca-vault/1","vault_id":"00000000000000000000000000000000","recipients":[],"data_key":"AA==","mac":"","chain":[{"vault_id":"x","pub":"y"}]},"records":{`); err == nil {
		t.Error("a file vault header with a chain was accepted")
	}
}
