package vault

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"filippo.io/age"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// Etcd is the shared vault (kind "etcd"): records in an etcd cluster under a
// prefix, sealed in arca exactly as in the file vault. etcd holds ciphertext
// and keyed-hash slot ids, never a name or a value.
//
// Keys under the prefix P:
//
//	P + "vault"                    the header (JSON): format, vault id, recipients, wrapped data key, MAC
//	P + "written"                  touched by every record write; a rekey commits only if it did not move
//	P + "r/" + vaultID + "/" + slot   one sealed record: nonce || ciphertext
//
// Records sit under the vault id of the data key that sealed them, so a rekey
// writes the re-sealed records beside the old ones and switches the header
// to them in one transaction.
//
// Every op reads the header's mod revision in the same transaction as what
// it reads, so a handle never uses a data key that was replaced. Writers of
// one record take turns under a cluster-wide lock (a lease-bound key), and
// every write is still conditioned on the header and on the record's mod
// revision, so a concurrent write is never lost, even if a lock lapsed.
//
// A handle's methods hold its lock across their round trips: one handle
// runs one op at a time.
type Etcd struct {
	cli     *clientv3.Client
	prefix  string
	eps     string // the endpoints, for messages
	ids     []age.Identity
	extra   []string // recipients beside the identity, for a vault a write creates
	pinFile string   // where this machine pins the vault's continuity key; "": no pin
	now     func() time.Time
	timeout time.Duration

	mu      sync.Mutex
	hdr     header
	hdrRev  int64 // the header's mod revision as loaded; 0: not loaded
	k       *keys
	sess    *concurrency.Session // the lease write locks hang on; nil until a write
	orphans []clientv3.LeaseID   // leases of ended sessions not yet confirmed revoked
}

// EtcdOptions say how to reach a shared vault.
type EtcdOptions struct {
	Endpoints []string // host:port or URL
	Prefix    string   // starts and ends with "/"
	Identity  string   // age identity file
	// Recipients the data key is wrapped to beside the identity's own,
	// when a first write creates the vault.
	Recipients []string
	Username   string // etcd auth, with Password
	Password   string
	CAFile     string // TLS: the CA that signed the members' certificates
	CertFile   string // TLS client certificate, with KeyFile
	KeyFile    string
	// PinFile is where this machine keeps the continuity key of the data
	// key it last used (see etcdpin.go); "" pins nothing.
	PinFile string
	// Timeout bounds one op, retries included (DefaultEtcdTimeout when 0).
	Timeout time.Duration
	Now     func() time.Time // stamps record times; time.Now when nil
}

// DefaultEtcdTimeout bounds an op on the shared vault, retries included,
// while the cluster has no leader or a member is down.
const DefaultEtcdTimeout = 5 * time.Second

// etcdFormat names the shared vault's header layout.
const etcdFormat = "arca-etcd-vault/1"

// Sizes read from etcd are bounded like any input.
const (
	maxEtcdHeader = 1 << 20
	maxEtcdRecord = 256 << 10 // a sealed 64 KiB value with its name fits 4 times
	// maxEtcdResponse bounds one answer from etcd, the listing of every
	// record included: about 400,000 records of small values.
	maxEtcdResponse = 64 << 20
)

// OpenEtcd connects to the shared vault. Nothing is read until the first op:
// a cluster that does not answer is reported by the op. A vault that is not
// there yet reads as empty and is created by the first write.
func OpenEtcd(o EtcdOptions) (*Etcd, error) {
	ids, err := LoadIdentity(o.Identity)
	if err != nil {
		return nil, err
	}
	cli, err := dialEtcd(o)
	if err != nil {
		return nil, err
	}
	e := &Etcd{cli: cli, prefix: o.Prefix, eps: strings.Join(o.Endpoints, ","), ids: ids, extra: o.Recipients, pinFile: o.PinFile, now: o.Now, timeout: o.Timeout}
	if e.now == nil {
		e.now = time.Now
	}
	if e.timeout <= 0 {
		e.timeout = DefaultEtcdTimeout
	}
	return e, nil
}

// dialEtcd makes the client. Its logger is a no-op: stderr is the audit wire.
func dialEtcd(o EtcdOptions) (*clientv3.Client, error) {
	if len(o.Endpoints) == 0 {
		return nil, errors.New("etcd vault: no endpoints")
	}
	if !strings.HasPrefix(o.Prefix, "/") || !strings.HasSuffix(o.Prefix, "/") {
		return nil, fmt.Errorf("etcd vault: prefix %q must start and end with /", o.Prefix)
	}
	for _, ep := range o.Endpoints {
		tlsSet := o.CAFile != "" || o.CertFile != "" || o.KeyFile != ""
		if tlsSet && !strings.HasPrefix(ep, "https://") && strings.Contains(ep, "://") {
			return nil, fmt.Errorf("etcd vault: endpoint %q names a scheme without TLS, but TLS files are set (write host:port or https://)", ep)
		}
	}
	tc, err := etcdTLS(o)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          o.Endpoints,
		DialTimeout:        max(o.Timeout, time.Second), // also bounds the login with username/password
		DialKeepAliveTime:  10 * time.Second,
		Username:           o.Username,
		Password:           o.Password,
		TLS:                tc,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: 2 << 20,
		MaxCallRecvMsgSize: maxEtcdResponse,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd vault at %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	return cli, nil
}

// etcdTLS builds the client's TLS settings; nil (plain) when none are given.
func etcdTLS(o EtcdOptions) (*tls.Config, error) {
	if o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := readBounded(o.CAFile, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("etcd vault: CA file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd vault: CA file %s holds no PEM certificate", o.CAFile)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("etcd vault: a TLS client certificate needs both a cert and a key file")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd vault: TLS client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// readBounded reads a small file whole, refusing one over max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return os.ReadFile(path)
}

// CreateEtcd makes an empty shared vault under o.Prefix whose data key is
// wrapped to recipients. A vault already there is kept, never replaced;
// created reports which happened.
func CreateEtcd(ctx context.Context, o EtcdOptions, recipients []age.Recipient) (created bool, err error) {
	cli, err := dialEtcd(o)
	if err != nil {
		return false, err
	}
	defer cli.Close()
	e := &Etcd{cli: cli, prefix: o.Prefix, eps: strings.Join(o.Endpoints, ","), timeout: o.Timeout}
	if e.timeout <= 0 {
		e.timeout = DefaultEtcdTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return e.createHeader(ctx, recipients)
}

// createHeader puts a fresh header wrapped to recipients unless there is
// one already; created reports which happened.
func (e *Etcd) createHeader(ctx context.Context, recipients []age.Recipient) (created bool, err error) {
	k, err := freshKeys()
	if err != nil {
		return false, err
	}
	chain, err := extendChain(nil, nil, k)
	if err != nil {
		return false, err
	}
	h, err := sealHeader(k, recipients, chain)
	if err != nil {
		return false, err
	}
	hk := e.headerKey()
	err = e.do(ctx, func(ctx context.Context) error {
		resp, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(hk), "=", 0)).
			Then(clientv3.OpPut(hk, string(h))).Commit()
		if err == nil {
			created = resp.Succeeded
		}
		return err
	})
	return created, err
}

// createOnWrite makes the vault a first write finds missing, wrapped to the
// identity and the configured recipients, and loads it. Callers hold e.mu.
func (e *Etcd) createOnWrite(ctx context.Context) error {
	rs := RecipientsOf(e.ids)
	for _, s := range e.extra {
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			return fmt.Errorf("%s: recipient %q is not an age X25519 public key", e.where(), s)
		}
		if !slices.ContainsFunc(rs, func(x age.Recipient) bool { return fmt.Sprint(x) == s }) {
			rs = append(rs, r)
		}
	}
	if _, err := e.createHeader(ctx, rs); err != nil {
		return err
	}
	return e.loadHeader(ctx)
}

// Close implements Store.
func (e *Etcd) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endSession()
	e.k, e.hdrRev = nil, 0
	return e.cli.Close()
}

func (e *Etcd) headerKey() string         { return e.prefix + "vault" }
func (e *Etcd) writtenKey() string        { return e.prefix + "written" }
func (e *Etcd) recordsKey() string        { return e.prefix + "r/" + e.hdr.VaultID + "/" }
func (e *Etcd) recordKey(s string) string { return e.recordsKey() + s }

// where names the vault in messages.
func (e *Etcd) where() string { return fmt.Sprintf("etcd vault %s at %s", e.prefix, e.eps) }
