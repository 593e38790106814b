package seal

import (
	"encoding/json"
	"strings"
	"testing"

	"filippo.io/age"
)

// A header is refused before it is written when its wrapped key would be
// over the bound every read checks: it would leave a vault no one opens.
func TestNewHeaderBound(t *testing.T) {
	k, err := Fresh()
	if err != nil {
		t.Fatal(err)
	}
	var rs []age.Recipient
	for range 1000 {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, id.Recipient())
	}
	if _, err := NewHeader("arca-vault/1", k, rs); err == nil || !strings.Contains(err.Error(), "1000 recipients are too many") {
		t.Fatalf("a header for 1000 recipients: %v", err)
	}
	if _, err := NewHeader("arca-vault/1", k, rs[:100]); err != nil {
		t.Fatalf("a header for 100 recipients: %v", err)
	}
}

// A header with no commits is stored as it was before the field: no
// "commits" key, so format-1 files and the shared vault's headers keep
// their bytes; one with commits lists them before the MAC, so that the
// header line ends in what authenticates it.
func TestHeaderCommitsOmittedWhenEmpty(t *testing.T) {
	h := Header{Format: "f", VaultID: "v", Recipients: []string{"r"}, DataKey: []byte{1}, MAC: "m"}
	b, err := json.Marshal(h)
	if err != nil || string(b) != `{"format":"f","vault_id":"v","recipients":["r"],"data_key":"AQ==","mac":"m"}` {
		t.Fatalf("a header without commits: %s, %v", b, err)
	}
	h.Commits = []string{"1-0123456789abcdef"}
	if b, err = json.Marshal(h); err != nil || !strings.HasSuffix(string(b), `"commits":["1-0123456789abcdef"],"mac":"m"}`) {
		t.Fatalf("a header with commits: %s, %v", b, err)
	}
}
