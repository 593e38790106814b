package seal

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

func chainOf(name string, versions ...uint64) vault.Chain {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	c := vault.Chain{Name: name, ChangedAt: at}
	for i, v := range versions {
		r := vault.Record{Meta: vault.Meta{Name: name, Version: v, CreatedAt: at, UpdatedAt: at.Add(time.Duration(v))}, Value: vault.NewSecret([]byte{byte('a' + v)})}
		if i == 0 {
			c.Current, c.HasCurrent = r, true
		} else {
			c.Previous = append(c.Previous, r)
		}
		c.Highest = max(c.Highest, v)
	}
	return c
}

func sealChain(t testing.TB, k *Keys, slot string, c vault.Chain) (cur, hist []byte) {
	t.Helper()
	var err error
	if c.HasCurrent {
		if cur, err = k.Seal(slot, c.Current); err != nil {
			t.Fatal(err)
		}
	}
	if hist, err = k.SealHistory(slot, c); err != nil {
		t.Fatal(err)
	}
	return cur, hist
}

func TestChainRoundTrip(t *testing.T) {
	k, err := Fresh()
	if err != nil {
		t.Fatal(err)
	}
	slot := k.Slot("app/key")
	c := chainOf("app/key", 5, 3, 2)
	c.Previous[0].RotatedAt = c.ChangedAt
	cur, hist := sealChain(t, k, slot, c)
	got, err := k.OpenChain(slot, cur, hist)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "app/key" || got.Current.Version != 5 || got.Highest != 5 || len(got.Previous) != 2 || !got.ChangedAt.Equal(c.ChangedAt) {
		t.Fatalf("%+v", got)
	}
	for i, r := range got.Previous {
		want := c.Previous[i]
		if r.Version != want.Version || !r.UpdatedAt.Equal(want.UpdatedAt) || !r.RotatedAt.Equal(want.RotatedAt) || !bytes.Equal(r.Value.Reveal(), want.Value.Reveal()) {
			t.Fatalf("version %d came back different", want.Version)
		}
	}
	// A soft-deleted name: no current record.
	d := chainOf("app/key", 4, 2)
	d.Previous = append([]vault.Record{d.Current}, d.Previous...)
	d.Current, d.HasCurrent, d.DeletedAt = vault.Record{}, false, c.ChangedAt
	_, dh := sealChain(t, k, slot, d)
	got, err = k.OpenChain(slot, nil, dh)
	if err != nil || got.HasCurrent || !got.Deleted() || got.Name != "app/key" || len(got.Previous) != 2 {
		t.Fatalf("deleted chain: %+v %v", got, err)
	}
}

func TestChainRefusesSwapsAndReplays(t *testing.T) {
	k, _ := Fresh()
	other, _ := Fresh()
	slotA, slotB := k.Slot("app/a"), k.Slot("app/b")
	v5 := chainOf("app/a", 5, 4)
	cur5, hist5 := sealChain(t, k, slotA, v5)
	cur4, _ := sealChain(t, k, slotA, chainOf("app/a", 4))
	_, histB := sealChain(t, k, slotB, chainOf("app/b", 2, 1))
	cp := func(b []byte) []byte { return bytes.Clone(b) }
	cases := map[string]func() (vault.Chain, error){
		"positive control": func() (vault.Chain, error) { return k.OpenChain(slotA, cp(cur5), cp(hist5)) },
		"older current beside a newer history": func() (vault.Chain, error) {
			return k.OpenChain(slotA, cp(cur4), cp(hist5))
		},
		"history of another name": func() (vault.Chain, error) { return k.OpenChain(slotA, cp(cur5), cp(histB)) },
		"history as a record":     func() (vault.Chain, error) { return k.OpenChain(slotA, cp(hist5), nil) },
		"record as history":       func() (vault.Chain, error) { return k.OpenChain(slotA, nil, cp(cur5)) },
		"history without its current record": func() (vault.Chain, error) {
			return k.OpenChain(slotA, nil, cp(hist5))
		},
		"another vault's key": func() (vault.Chain, error) { return other.OpenChain(slotA, cp(cur5), cp(hist5)) },
		"nothing":             func() (vault.Chain, error) { return k.OpenChain(slotA, nil, nil) },
	}
	for name, open := range cases {
		_, err := open()
		if name == "positive control" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			continue
		}
		if !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrAuth", name, err)
		}
	}
}

func TestDecodeHistoryIsStrict(t *testing.T) {
	good := appendHistory(nil, chainOf("app/a", 5, 4, 2))
	if _, _, err := decodeHistory(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		if _, _, err := decodeHistory(good[:i]); err == nil {
			t.Fatalf("a history part cut at %d bytes decoded", i)
		}
	}
	if _, _, err := decodeHistory(append(bytes.Clone(good), 0)); err == nil {
		t.Fatal("trailing bytes decoded")
	}
	unordered := chainOf("app/a", 5, 2, 4)
	if _, _, err := decodeHistory(appendHistory(nil, unordered)); err == nil {
		t.Fatal("versions out of order decoded")
	}
	above := chainOf("app/a", 3, 4)
	if _, _, err := decodeHistory(appendHistory(nil, above)); err == nil {
		t.Fatal("an earlier version above the current one decoded")
	}
}
