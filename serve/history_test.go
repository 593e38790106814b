package serve

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/opstest"
)

// TestHistoryOps: the ops of versions and history over the wire, on a
// vault that follows vault.Step: integers decoded strictly, a conflict
// answered with details.current_version, every response and event held
// to the published schemas (checkWire).
func TestHistoryOps(t *testing.T) {
	mem := &opstest.MemBackends{}
	o := opstest.New(t, opstest.Options{Now: fixedClock, Backends: mem})
	o.Service.Close()
	stdin := strings.Join([]string{
		`{"id":1,"op":"put","ref":"arca://app/db","value":"v-one","if_version":0}`,
		`{"id":2,"op":"put","ref":"arca://app/db","value":"v-two"}`,
		`{"id":3,"op":"put","ref":"arca://app/db","value":"v-three","if_version":1}`,
		`{"id":4,"op":"get","ref":"arca://app/db","version":1}`,
		`{"id":5,"op":"history","ref":"arca://app/db"}`,
		`{"id":6,"op":"rollback","ref":"arca://app/db","version":1,"if_version":2}`,
		`{"id":7,"op":"rm","ref":"arca://app/db"}`,
		`{"id":8,"op":"list","deleted":true}`,
		`{"id":9,"op":"undelete","ref":"arca://app/db"}`,
		`{"id":10,"op":"destroy","ref":"arca://app/db","versions":[1]}`,
		`{"id":11,"op":"changes"}`,
		`{"id":12,"op":"get","ref":"arca://app/db","version":1.0}`,
		`{"id":13,"op":"get","ref":"arca://app/db","version":0}`,
		`{"id":14,"op":"destroy","ref":"arca://app/db","versions":[0]}`,
		`{"id":15,"op":"changes","since":"not-a-cursor"}`,
		`{"id":16,"op":"get","ref":"arca://app/db","version":"1"}`,
		`{"id":17,"op":"get","ref":"arca://app/db","version":7}`,
		`{"id":18,"op":"changes","since":""}`,
		`{"id":19,"op":"get","ref":"arca://app/db","version":01}`,
		`{"id":20,"op":"get","ref":"arca://app/db","version":-1}`,
		`{"id":21,"op":"get","ref":"arca://app/db","version":12345678901234567}`,
		`{"id":22,"op":"get","ref":"arca://app/db","version":9007199254740992}`,
		`{"id":23,"op":"rm","ref":"arca://app/db","if_version":1e0}`,
	}, "\n") + "\n"
	f := &fixture{home: o.Home, cfg: o.Config, ops: o}
	var out, errb lockedBuffer
	err := Serve(context.Background(), Options{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Config: f.cfg, Now: fixedClock, Backends: mem, Signals: make(chan os.Signal)})
	tr := transcript{rawOut: out.Bytes(), rawErr: errb.Bytes(), err: err}
	tr.stdout, tr.stderr = splitLines(t, "stdout", tr.rawOut), splitLines(t, "stderr", tr.rawErr)
	checkWire(t, tr, []byte(stdin), true)
	want := []string{
		`{"id":1,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":1,"created":true,`,
		`{"id":2,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":2,`,
		`{"id":3,"ok":false,"error":{"code":"conflict","message":"arca://app/db in env \"default\": version conflict: the current version is 2; nothing was written","details":{"current_version":2}}}`,
		`{"id":4,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"v-one","version":1,`,
		`{"id":5,"ok":true,"result":{"ref":"arca://app/db","env":"default","current":2,"max_versions":10,"versions":[{"version":2,"state":"current",`,
		`{"id":6,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":3,"created":false,`,
		`{"id":7,"ok":true,"result":{"ref":"arca://app/db","env":"default","removed":true,"version":3}}`,
		`{"id":8,"ok":true,"result":{"env":"default","records":[{"ref":"arca://app/db","version":3,`,
		`{"id":9,"ok":true,"result":{"ref":"arca://app/db","env":"default","version":4,"created":false,`,
		`{"id":10,"ok":true,"result":{"ref":"arca://app/db","env":"default","destroyed":[1],"removed":false}}`,
		`{"id":11,"ok":true,"result":{"env":"default","cursor":"m`,
		`{"id":12,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":13,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":14,"ok":false,"error":{"code":"bad_request","message":"versions must be integers from 1 to 9007199254740991"}}`,
		`{"id":15,"ok":false,"error":{"code":"bad_request","message":"since: not a changes cursor arca gave (a cursor is valid only for the env whose changes gave it)"}}`,
		`{"id":16,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":17,"ok":false,"error":{"code":"not_found","message":"arca://app/db in env \"default\": version 7 is not kept"}}`,
		`{"id":18,"ok":false,"error":{"code":"bad_request","message":"since is empty (send the cursor a changes result gave, or none)"}}`,
		`{"id":null,"ok":false,"error":{"code":"bad_request","message":"request is not valid JSON`,
		`{"id":20,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":21,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":22,"ok":false,"error":{"code":"bad_request","message":"field \"version\" must be an integer from 1 to 9007199254740991"}}`,
		`{"id":23,"ok":false,"error":{"code":"bad_request","message":"field \"if_version\" must be an integer from 0 to 9007199254740991"}}`,
	}
	if len(tr.stdout) != len(want) {
		t.Fatalf("%d replies, want %d:\n%s", len(tr.stdout), len(want), tr.rawOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(tr.stdout[i], w) {
			t.Errorf("reply %d:\n%s\nwant it to start\n%s", i+1, tr.stdout[i], w)
		}
	}
	ev := string(tr.rawErr)
	for _, w := range []string{`"event":"rollback","op":"rollback","outcome":"ok","id":6,"env":"default","ref":"app/db","version":3,"message":"rolled back from version 1"`,
		`"code":"conflict"`, "destroyed version 1: a deliberate loss"} {
		if !strings.Contains(ev, w) {
			t.Errorf("the audit wire has no %s", w)
		}
	}
	if strings.Contains(ev, "v-one") || strings.Contains(ev, "v-two") {
		t.Error("the audit wire holds a value")
	}
}
