package serve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// etcdFixture is a fixture whose default env, "team", is a shared vault
// under prefix on the members at endpoints.
func etcdFixture(t testing.TB, endpoints []string, prefix string) *fixture {
	t.Helper()
	eps := make([]string, len(endpoints))
	for i, ep := range endpoints {
		eps[i] = quoteTOML(ep)
	}
	return newFixtureConfig(t, fmt.Sprintf(`default_env = "team"
[envs.team]
vault = "shared"
[vaults.shared]
kind = "etcd"
endpoints = [%s]
prefix = %s
`, strings.Join(eps, ", "), quoteTOML(prefix)))
}

// TestServeOnEtcd runs a whole session on a shared vault: every op on a
// real etcd member, every response and event valid against the published
// schemas (checkWire), the value never on stderr, and check reporting the
// member that answered.
func TestServeOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	f := etcdFixture(t, c.Endpoints()[:1], "/arca/serve/")
	const value = "ETCD-CANARY-VALUE-77e1"
	in := lines(
		`{"id":1,"op":"put","ref":"arca://app/db","value":"`+value+`"}`,
		`{"id":2,"op":"get","ref":"arca://app/db"}`,
		`{"id":3,"op":"rotate","ref":"arca://app/db","value":"`+value+`-2"}`,
		`{"id":4,"op":"list"}`,
		`{"id":5,"op":"check"}`,
		`{"id":6,"op":"rm","ref":"arca://app/db"}`,
		`{"id":7,"op":"get","ref":"arca://app/db"}`,
		`{"id":8,"op":"vault"}`,
	)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in)})
	checkReplies(t, tr, []want{ok("1"), ok("2"), ok("3"), ok("4"), ok("5"), ok("6"),
		{id: "7", code: "not_found", msg: "arca://app/db not found in env \"team\""},
		unknownOp("8", `"vault" is not served — use the single-shot CLI`)})
	rs := tr.responses(t)
	if got := string(rs[1].Result); !strings.Contains(got, `"value":"`+value+`","version":1`) {
		t.Errorf("get: %s", got)
	}
	if got := string(rs[4].Result); !strings.Contains(got, `"kind":"etcd","healthy":true,"records":1,"versions":1,"erased":0,"problems":[],"info":["etcd member `+c.Endpoints()[0]) {
		t.Errorf("check: %s", got)
	}
	if strings.Contains(string(tr.rawErr), value) {
		t.Error("the value reached the audit wire")
	}
}

// TestServeOnEtcdReadsAtOnce: pipelined gets on a shared vault, with a
// write among them, run at once and come out as if one by one: every
// answer in order with the value of its turn (the gets behind the rotate
// read the new value), one chain of events in order.
func TestServeOnEtcdReadsAtOnce(t *testing.T) {
	c := etcdtest.Start(t, 1)
	f := etcdFixture(t, c.Endpoints()[:1], "/arca/serve-reads/")
	const n = 20
	ls := append(putRecords(2), gets(1, n, 2)...)
	ls = append(ls, `{"id":"rot","op":"rotate","ref":"arca://app/r0","value":"w-0"}`)
	ls = append(ls, gets(n+1, n, 2)...)
	in := lines(ls...)
	tr := f.session(t, sessionOpts{stdin: strings.NewReader(in), sent: []byte(in)})
	rs := tr.responses(t)
	if len(rs) != len(ls) {
		t.Fatalf("%d replies to %d requests", len(rs), len(ls))
	}
	for i, r := range rs {
		var id int
		if _, err := fmt.Sscan(string(r.ID), &id); err != nil {
			continue // a put or the rotate
		}
		want := fmt.Sprintf(`"value":"v-%d"`, id%2)
		if id > n && id%2 == 0 {
			want = `"value":"w-0"`
		}
		if !r.OK || !strings.Contains(string(r.Result), want) {
			t.Errorf("reply %d (id %d): %s %s, want %s", i+1, id, r.Result, r.message(), want)
		}
	}
}
