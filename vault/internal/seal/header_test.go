package seal

import (
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
