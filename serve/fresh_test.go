package serve

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// TestSeesWritesMadeBetweenRequests: a write made through another handle
// (as another process's would be) after a reply and before the next
// request is seen by that request, never a stale value.
func TestSeesWritesMadeBetweenRequests(t *testing.T) {
	f := newFixture(t)
	other := f.ops.NewService(t, opstest.Options{Now: fixedClock})
	put := func(v string) {
		t.Helper()
		if _, err := other.Put(context.Background(), ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte(v))}); err != nil {
			t.Fatal(err)
		}
	}
	put("v0")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- func() error {
			defer inW.Close()
			br := bufio.NewReader(outR)
			for i, v := range []string{"v1", "v2", "v3"} {
				put(v)
				if _, err := io.WriteString(inW, `{"op":"get","ref":"arca://app/db"}`+"\n"); err != nil {
					return err
				}
				line, err := br.ReadString('\n')
				if err != nil {
					return err
				}
				if !strings.Contains(line, `"value":"`+v+`"`) {
					t.Errorf("get %d after writing %s: %s", i, v, line)
				}
			}
			return nil
		}()
		io.Copy(io.Discard, outR)
	}()
	f.session(t, sessionOpts{stdin: inR, stdout: outW, sent: []byte(strings.Repeat(`{"op":"get","ref":"arca://app/db"}`+"\n", 3))})
	outW.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
