package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/identity"
)

// With etcd auth on, a wrong password, a user whose role does not cover
// the prefix, and no user at all are each said in words that name the
// user and the prefix, at once, and never with the password.
func TestEtcdAuthFailures(t *testing.T) {
	c := etcdtest.Start(t, 1)
	const password, canary = "s3cret-of-ana", "CANARY-wr0ng-pa55"
	dir := t.TempDir()
	idPath := filepath.Join(dir, "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	base := etcd.Options{Endpoints: c.Endpoints(), Prefix: "/arca/ok/", Identity: idPath, Username: "ana", Password: password, Timeout: testTimeout}
	// A first vault, before the admin's client runs gRPC: the package
	// quiets gRPC's logger then, which must come first.
	if e, err := etcd.Open(etcd.Options{Endpoints: base.Endpoints, Prefix: base.Prefix, Identity: idPath, Timeout: testTimeout}); err != nil {
		t.Fatal(err)
	} else {
		e.Close()
	}
	enableAuth(t, c, password)
	ctx := context.Background()
	wrong := filepath.Join(dir, "wrong.password")
	if err := os.WriteFile(wrong, []byte(canary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := etcd.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get(ctx, "app/db"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("get under the role's prefix: %v, want not found", err)
	}
	e.Close()
	for _, tc := range []struct {
		name   string
		edit   func(*etcd.Options)
		is     error
		wants  []string
		opened bool // the error comes from the op, not from Open
	}{
		{"wrong password", func(o *etcd.Options) { o.Password, o.PasswordFile = "", wrong }, rpctypes.ErrAuthFailed,
			[]string{`authentication failed: the cluster refused the login of etcd user "ana" with the password given`}, false},
		{"prefix outside the role", func(o *etcd.Options) { o.Prefix = "/arca/no/" }, rpctypes.ErrPermissionDenied,
			[]string{`permission denied: etcd user "ana" may not read and write the prefix /arca/no/`, "etcd vault /arca/no/ at "}, true},
		{"no user", func(o *etcd.Options) { o.Username, o.Password = "", "" }, rpctypes.ErrUserEmpty,
			[]string{"authentication required: the cluster has auth enabled and this vault logs in as no one"}, true},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			o := base
			tc.edit(&o)
			start := time.Now()
			e, err := etcd.Open(o)
			if err == nil {
				defer e.Close()
				_, err = e.Get(ctx, "app/db")
			} else if tc.opened {
				t.Fatalf("Open: %v", err)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v, want it at once", took)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("%v, want it to wrap %v", err, tc.is)
			}
			for _, w := range append(tc.wants, c.Endpoints()[0]) {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%v, want it to say %q", err, w)
				}
			}
			if err != nil && (strings.Contains(err.Error(), password) || strings.Contains(err.Error(), canary)) {
				t.Errorf("the error holds a password: %v", err)
			}
		})
	}
}

// enableAuth turns etcd auth on in c: user root, and user ana with
// password, whose role arca-ok may read and write /arca/ok/.
func enableAuth(t *testing.T, c *etcdtest.Cluster, password string) {
	t.Helper()
	admin := c.Client(t)
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "arca-ok"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "arca-ok", "/arca/ok/", clientv3.GetPrefixRangeEnd("/arca/ok/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "ana", password); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "ana", "arca-ok"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
}

// A login to a cluster that has lost its quorum fails, each time, with
// the same words: the members that cannot be reached and why, in the
// order of the endpoints, and not what the client said last (a deadline,
// or a connection to whichever member it tried).
func TestLoginWithoutQuorumSaysTheSame(t *testing.T) {
	c := etcdtest.Start(t, 3)
	const password = "s3cret-of-ana"
	idPath := filepath.Join(t.TempDir(), "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	eps := c.AllEndpoints()
	o := etcd.Options{Endpoints: eps, Prefix: "/arca/ok/", Identity: idPath, Username: "ana", Password: password, Timeout: time.Second}
	if e, err := etcd.Open(etcd.Options{Endpoints: eps, Prefix: o.Prefix, Identity: idPath, Timeout: testTimeout}); err != nil {
		t.Fatal(err) // quiets gRPC before the admin's client runs (see TestEtcdAuthFailures)
	} else {
		e.Close()
	}
	enableAuth(t, c, password)
	c.Members[0].Kill(t)
	c.Members[2].Kill(t)
	want := fmt.Sprintf("etcd vault at %s: the cluster did not answer the login in time (1s): "+
		"nothing accepts connections at %s and %s (connect: connection refused)", strings.Join(eps, ","), eps[0], eps[2])
	for range 3 {
		e, err := etcd.Open(o)
		if err == nil {
			e.Close()
			t.Fatal("a login without a quorum succeeded")
		}
		if err.Error() != want {
			t.Errorf("Open: %v\nwant: %s", err, want)
		}
	}
}
