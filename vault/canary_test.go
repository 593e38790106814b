package vault_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

const (
	canaryName  = "canaryns/canaryname-4411"
	canaryValue = "CANARY-7f3a9c"
)

// canaryForms are the canary's name and value as they could leak: plain,
// base64 and hex.
func canaryForms() []string {
	var out []string
	for _, s := range []string{canaryName, canaryValue, "canaryname-4411"} {
		b := []byte(s)
		out = append(out, s,
			base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
			base64.URLEncoding.EncodeToString(b), hex.EncodeToString(b))
	}
	return out
}

func wantNoCanary(t *testing.T, where, text string) {
	t.Helper()
	for _, c := range canaryForms() {
		if strings.Contains(text, c) {
			t.Errorf("%s contains %q", where, c)
		}
	}
}

// TestFileCanary: the vault's files never hold the name or value in the
// clear, and no error or problem about them quotes them.
func TestFileCanary(t *testing.T) {
	v := newFileVault(t)
	f := v.open(t)
	ctx := context.Background()
	apply := func(k vault.Kind, name string, approve vault.Approve) error {
		_, err := f.Apply(ctx, vault.Write{Kind: k, Name: name, Value: vault.NewSecret([]byte(canaryValue))}, approve)
		return err
	}
	for _, k := range []vault.Kind{vault.Put, vault.Rotate, vault.Put} {
		if err := apply(k, canaryName, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := f.Get(ctx, canaryName); err != nil || string(r.Value.Reveal()) != canaryValue {
		t.Fatalf("Get: %v", err)
	}
	for _, name := range dirFiles(t, v.dir) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		wantNoCanary(t, name, string(data))
	}

	var errs []error
	missing := canaryName + "-missing"
	_, err := f.Get(ctx, missing)
	errs = append(errs, err, apply(vault.Rotate, missing, approveAll), apply(vault.Remove, missing, approveAll),
		apply(vault.Put, canaryName, func(vault.Meta) error { return errors.New("refused") }))
	if err := corruptFirstRecord(v.path); err != nil {
		t.Fatal(err)
	}
	_, err = f.Get(ctx, canaryName)
	errs = append(errs, err, apply(vault.Put, canaryName, approveAll), apply(vault.Rotate, canaryName, approveAll))
	_, err = f.List(ctx)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("error %d: the operation succeeded", i)
			continue
		}
		wantNoCanary(t, fmt.Sprintf("error %d (%v)", i, err), err.Error())
	}
	rep, err := f.Check(ctx)
	if err != nil || len(rep.Problems) == 0 {
		t.Fatalf("Check of the corrupted vault: %v %v", rep, err)
	}
	wantNoCanary(t, "Check problems", strings.Join(rep.Problems, "\n"))
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) < 2 {
		t.Fatalf("walk %s: %v %v", dir, out, err)
	}
	return out
}

// TestSecretNeverPrints: every formatting path of a Secret, alone or inside
// a Record or Write, redacts.
func TestSecretNeverPrints(t *testing.T) {
	s := vault.NewSecret([]byte(canaryValue))
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
		wantNoCanary(t, what, out)
		if !strings.Contains(out, "redacted") {
			t.Errorf("%s: %q does not say <redacted>", what, out)
		}
	}
}
