package vault_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// TestSecretNeverPrints: every formatting path of a Secret, alone or inside
// a Record or Write, redacts.
func TestSecretNeverPrints(t *testing.T) {
	s := vault.NewSecret([]byte(vaulttest.CanaryValue))
	rec := vault.Record{Meta: vault.Meta{Name: "app/k", Version: 1, CreatedAt: time.Now()}, Value: s}
	w := vault.Write{Kind: vault.Put, Name: "app/k", Value: s}
	outputs := map[string]string{
		"fmt secret": fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s),
		"fmt error":  fmt.Errorf("wrapped: %v", s).Error(),
		"println":    fmt.Sprintln(s, rec, &s),
	}
	// Verbs vet would refuse for some of these types, which is the point.
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v", "%T"}
	for what, v := range map[string]any{"pointer": &s, "record": rec, "write": w, "slice": []vault.Secret{s}, "map": map[string]vault.Secret{"k": s}} {
		for _, verb := range verbs {
			outputs["fmt "+what] += fmt.Sprintf(verb, v) + " "
		}
	}
	for what, v := range map[string]any{"json secret": s, "json record": rec, "json write": w, "json map": map[string]vault.Secret{"k": s}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		outputs[what] = string(b)
	}
	var text, js bytes.Buffer
	for _, l := range []*slog.Logger{slog.New(slog.NewTextHandler(&text, nil)), slog.New(slog.NewJSONHandler(&js, nil))} {
		l.Info("msg", "secret", s, "record", rec, slog.Any("write", w), slog.Group("g", "s", s))
	}
	outputs["slog text"], outputs["slog json"] = text.String(), js.String()
	for what, out := range outputs {
		vaulttest.WantNoCanary(t, what, out)
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s: %q does not say <redacted>", what, out)
		}
	}
}
