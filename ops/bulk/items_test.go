package bulk

import (
	"math"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/secretfile"
	"github.com/arca-secrets/arca/vault"
)

// Packed hands back every record as added: ref, place and value, an empty
// value too, and a value that cannot be appended to over its neighbour.
func TestPackedRoundTrip(t *testing.T) {
	p := NewPacked(2, 8, 4) // less room than it needs: it grows
	recs := []struct{ ns, name, value, where string }{
		{"app", "db", "s3cret", "line 1"},
		{"app", "empty", "", "line 2"},
		{"ops", "token", strings.Repeat("t", 100), ""},
	}
	for _, r := range recs {
		if err := p.Add(r.ns, r.name, []byte(r.value), r.where); err != nil {
			t.Fatal(err)
		}
	}
	if p.Len() != len(recs) {
		t.Fatalf("Len %d, want %d", p.Len(), len(recs))
	}
	for i, r := range recs {
		it := p.At(i)
		if it.Ref != r.ns+"/"+r.name || string(it.Value.Reveal()) != r.value || it.Where != r.where || it.Meta != nil {
			t.Fatalf("At(%d) = %q %q %q, want %q %q %q", i, it.Ref, it.Value.Reveal(), it.Where, r.ns+"/"+r.name, r.value, r.where)
		}
	}
	v := p.At(0).Value.Reveal()
	_ = append(v, "XXXX"...)
	if got := string(p.At(2).Value.Reveal()); got != recs[2].value {
		t.Fatalf("an append to value 0 reached value 2: %q", got)
	}
}

// Offsets are 32 bits: what they cannot reach is refused, not wrapped.
func TestPackedBound(t *testing.T) {
	if !fitsUint32(math.MaxUint32-10, 10) || fitsUint32(math.MaxUint32-10, 11) || fitsUint32(math.MaxUint32, 1) {
		t.Fatal("fitsUint32 is wrong at the edge of 32 bits")
	}
}

// Pack names a flat input's entries in the namespace given, a nested
// one's in their own, and reports the shape.
func TestPack(t *testing.T) {
	p, _, shape, err := Pack([]byte("A=1\n# c\nB=\"two\"\n"), "dotenv", secretfile.Options{}, Landing{NS: "app"})
	if err != nil || shape != secretfile.Flat || p.Len() != 2 || p.At(0).Ref != "app/A" || p.At(1).Ref != "app/B" ||
		string(p.At(1).Value.Reveal()) != "two" || p.At(1).Where != "line 3" {
		t.Fatalf("flat: %v %v %d", shape, err, p.Len())
	}
	p, _, shape, err = Pack([]byte(`{"db":{"pw":"x"},"api":{"key":"y"}}`), "json", secretfile.Options{}, Landing{})
	if err != nil || shape != secretfile.Nested || p.Len() != 2 || p.At(0).Ref != "db/pw" || p.At(1).Ref != "api/key" {
		t.Fatalf("nested: %v %v %d", shape, err, p.Len())
	}
	if _, _, _, err := Pack([]byte("A=1\nA=2\n"), "dotenv", secretfile.Options{}, Landing{NS: "app"}); err == nil || !strings.Contains(err.Error(), "line 2: A is also set on line 1") {
		t.Fatalf("a name set twice: %v", err)
	}
}

// Pack lands a nested input under NSPrefix, leaves out empty values with
// SkipEmpty (else refuses them), and reports both, and the values holding
// references, by name.
func TestPackLanding(t *testing.T) {
	p, rep, _, err := Pack([]byte(`{"db":{"pw":"x","empty":""},"api":{"key":"${K}"}}`), "json", secretfile.Options{}, Landing{NSPrefix: "team-", SkipEmpty: true})
	if err != nil || p.Len() != 2 || p.At(0).Ref != "team-db/pw" || p.At(1).Ref != "team-api/key" {
		t.Fatalf("nested under a prefix: %v %d", err, p.Len())
	}
	if strings.Join(rep.Empty, ",") != "team-db/empty" || rep.Refs != nil { // json values are not dotenv's: no Refs
		t.Fatalf("report %+v", rep)
	}
	p, rep, _, err = Pack([]byte("A=\nB=$HOME\nC='$X'\nD=\"\"\nE=v\n"), "dotenv", secretfile.Options{}, Landing{NS: "app", SkipEmpty: true})
	if err != nil || p.Len() != 3 || strings.Join(rep.Empty, ",") != "A,D" || strings.Join(rep.Refs, ",") != "B" {
		t.Fatalf("flat: %v %d %+v", err, p.Len(), rep)
	}
	_, _, _, err = Pack([]byte("A=1\nB=\n"), "dotenv", secretfile.Options{}, Landing{NS: "app"})
	if err == nil || err.Error() != "line 2: B: the value is empty, and arca stores no empty value (--skip-empty leaves such keys out)" {
		t.Fatalf("empty refused: %v", err)
	}
	_, _, _, err = Pack([]byte(`{"db":{"k":"v"}}`), "json", secretfile.Options{}, Landing{NSPrefix: strings.Repeat("p", 127)})
	if err == nil || !strings.Contains(err.Error(), `the namespace --ns-prefix makes of "db" is not a valid name`) {
		t.Fatalf("too long: %v", err)
	}
}

// Records hands out vault records with their metadata, for a restore.
func TestRecordsItems(t *testing.T) {
	rs := Records{{Meta: vault.Meta{Name: "app/a", Version: 4}, Value: vault.NewSecret([]byte("v"))}}
	it := rs.At(0)
	if rs.Len() != 1 || it.Ref != "app/a" || it.Meta == nil || it.Meta.Version != 4 || string(it.Value.Reveal()) != "v" {
		t.Fatalf("At(0) = %+v", it)
	}
	if w := bulkWrite(it); w.Kind != vault.Restore || w.Meta.Version != 4 {
		t.Fatalf("its write: %+v", w)
	}
}

// firstRepeat names the first item, going down, whose ref an earlier one
// has, and the earlier one.
func TestFirstRepeat(t *testing.T) {
	for _, tc := range []struct {
		refs          []string
		first, second int
	}{
		{nil, -1, -1},
		{[]string{"a/x", "a/y"}, -1, -1},
		{[]string{"a/y", "a/x", "a/x", "a/y", "a/x"}, 1, 2},
		{[]string{"a/z", "a/y", "a/z", "a/y"}, 0, 2},
	} {
		var l ItemList
		for _, r := range tc.refs {
			l = append(l, Item{Ref: r})
		}
		if first, again := firstRepeat(l); first != tc.first || again != tc.second {
			t.Errorf("%v: %d, %d; want %d, %d", tc.refs, first, again, tc.first, tc.second)
		}
	}
}
