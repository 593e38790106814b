package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"filippo.io/age"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Vault is the shared vault (kind "etcd"): records in an etcd cluster under a
// prefix, sealed in arca exactly as in the file vault. etcd holds ciphertext
// and keyed-hash slot ids, never a name or a value.
//
// Keys under the prefix P:
//
//	P + "vault"                    the header (JSON): format, vault id, recipients, wrapped data key, MAC
//	P + "written"                  touched by every record write; a rekey commits only if it did not move
//	P + "r/" + vaultID + "/" + slot   one name: a sealed record, or its chain (stored.go)
//	P + "lock/r/" + slot + "/" + lease   a record's lock: the oldest such key holds it (lock.go)
//	P + "token/" + lease           a writer's last commit, to settle a lost answer
//
// Records sit under the vault id of the data key that sealed them, so a rekey
// writes the re-sealed records beside the old ones and switches the header
// to them in one transaction.
//
// Every op reads the header's mod revision in the same transaction as what
// it reads, so a handle never uses a data key that was replaced. Writers
// of one record take turns under its lock (a lease-bound key); writers of
// different records never wait for each other. A handle keeps the locks of
// its last write for a moment so that its next write of the same records
// costs one raft write; every write is still conditioned on the header and
// on the record's mod revision, so a concurrent write is never lost, even
// if a lock lapsed.
// A batch (batch.go) takes no locks: each of its commit units is one
// transaction conditioned on the header and on every record's mod
// revision: of it and a concurrent write to one of its records, the one
// that commits second fails, changing nothing.
//
// A handle's methods hold its lock across their round trips, so one handle
// runs one op at a time, but for Get: gets take what they need of the
// header under the lock and make their round trips without it, so a
// handle's gets run at once (beside one another and beside its other ops).
type Vault struct {
	reach   // the endpoints and TLS settings, to say why a member cannot be reached
	cli     *clientv3.Client
	prefix  string
	eps     string // the endpoints, for messages
	ids     []age.Identity
	extra   []string // recipients beside the identity, for a vault a write creates
	pinFile string   // where this machine pins the vault's continuity key; "": no pin
	now     func() time.Time
	timeout time.Duration

	mu      sync.Mutex
	history vault.History // what writes follow (SetHistory)
	hdr     header
	hdrRev  int64 // the header's mod revision as loaded; 0: not loaded
	k       *seal.Keys
	sess    *concurrency.Session // the lease the record locks hang on; nil until a write
	orphans []clientv3.LeaseID   // leases of ended sessions not yet confirmed revoked
	// locks are this handle's keys in record lock queues: slot -> the
	// key's create revision. Outside lockRecords, each is a lock it holds.
	locks   map[string]int64
	idle    *time.Timer   // lets go of locks once unused for holdFor
	holdFor time.Duration // holdIdle; tests set it
	// disarmed is told, under mu, each time an armed release is let go of
	// (replaced, stopped, or run out and done): tests only; nil otherwise.
	disarmed func()
	// getSent is told, without mu, as each get's round trip is about to
	// be made: tests only; nil otherwise. Set before the handle is used.
	getSent func()
}

// Options say how to reach a shared vault.
type Options struct {
	Endpoints []string // host:port or URL
	Prefix    string   // starts and ends with "/"
	Identity  string   // age identity file
	// Recipients the data key is wrapped to beside the identity's own,
	// when a first write creates the vault.
	Recipients []string
	Username   string // etcd auth, with Password or PasswordFile
	Password   string
	// PasswordFile holds the password (read when the vault is opened).
	PasswordFile string
	CAFile       string // TLS: the CA that signed the members' certificates
	CertFile     string // TLS client certificate, with KeyFile
	KeyFile      string
	// PinFile is where this machine keeps the continuity key of the data
	// key it last used (see etcdpin.go); "" pins nothing.
	PinFile string
	// Timeout bounds one op, retries included (the config's timeout_ms,
	// whose default ops/config holds); required.
	Timeout time.Duration
	Now     func() time.Time // stamps record times; time.Now when nil
	// Keys loads the identity file (a protected one once per process, or
	// $ARCA_IDENTITY_KEY); nil: a plain file only.
	Keys *identity.Keys
}

// Sizes read from etcd are bounded like any input.
const (
	maxEtcdHeader = 1 << 20
	maxEtcdRecord = 256 << 10 // a sealed 64 KiB value with its name fits 4 times
	// maxEtcdResponse bounds one answer from etcd. Bulk reads go in pages
	// that fit it (pages.go), so it bounds a page, not a vault.
	maxEtcdResponse = 64 << 20
)

// Open connects to the shared vault. Nothing is read until the first op:
// a cluster that does not answer is reported by the op. A vault that is not
// there yet reads as empty and is created by the first write.
func Open(o Options) (*Vault, error) {
	ids, err := o.Keys.Load(o.Identity)
	if err != nil {
		return nil, err
	}
	cli, r, err := dialEtcd(o)
	if err != nil {
		return nil, err
	}
	e := &Vault{reach: r, cli: cli, prefix: o.Prefix, eps: strings.Join(o.Endpoints, ","), ids: ids, extra: o.Recipients, pinFile: o.PinFile, now: o.Now, timeout: o.Timeout, holdFor: holdIdle, history: vault.DefaultHistory()}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// dialEtcd makes the client. Its logger is a no-op: stderr is the audit wire.
func dialEtcd(o Options) (*clientv3.Client, reach, error) {
	if len(o.Endpoints) == 0 {
		return nil, reach{}, errors.New("etcd vault: no endpoints")
	}
	if o.Timeout <= 0 {
		return nil, reach{}, errors.New("etcd vault: no timeout")
	}
	if !strings.HasPrefix(o.Prefix, "/") || !strings.HasSuffix(o.Prefix, "/") {
		return nil, reach{}, fmt.Errorf("etcd vault: prefix %q must start and end with /", o.Prefix)
	}
	for _, ep := range o.Endpoints {
		tlsSet := o.CAFile != "" || o.CertFile != "" || o.KeyFile != ""
		if tlsSet && !strings.HasPrefix(ep, "https://") && strings.Contains(ep, "://") {
			return nil, reach{}, fmt.Errorf("etcd vault: endpoint %q names a scheme without TLS, but TLS files are set (write host:port or https://)", ep)
		}
	}
	tc, err := etcdTLS(o)
	if err != nil {
		return nil, reach{}, err
	}
	password, err := o.password()
	if err != nil {
		return nil, reach{}, err
	}
	r := reach{endpoints: o.Endpoints, tls: tc, user: o.Username}
	if r.user == "" && tc != nil && len(tc.Certificates) > 0 && tc.Certificates[0].Leaf != nil {
		// With client certificate auth, etcd takes the certificate's
		// common name for the user.
		r.user = tc.Certificates[0].Leaf.Subject.CommonName
	}
	quietGRPC()
	cli, err := r.login(o.Timeout, clientv3.Config{
		Endpoints:          o.Endpoints,
		DialTimeout:        max(o.Timeout, time.Second), // also bounds the login with username/password
		DialKeepAliveTime:  10 * time.Second,
		Username:           o.Username,
		Password:           password,
		TLS:                tc,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: 2 << 20,
		MaxCallRecvMsgSize: maxEtcdResponse,
	})
	if err != nil {
		return nil, reach{}, fmt.Errorf("etcd vault at %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	return cli, r, nil
}

// login makes the client, which, with a username, logs in before it
// returns. A login that goes unanswered for attemptTimeout has the members
// probed meanwhile, as an op's tries do (see retry): when none can be
// reached with these settings, the login is given up at once and that is
// the error; otherwise the login goes on, bounded by DialTimeout.
func (r reach) login(timeout time.Duration, cfg clientv3.Config) (*clientv3.Client, error) {
	if cfg.Username == "" {
		return clientv3.New(cfg) // nothing is sent until the first op
	}
	// The client's context outlives the login: it ends when the client
	// is closed, or here, when the login is given up.
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Context = ctx
	type made struct {
		cli *clientv3.Client
		err error
	}
	done := make(chan made, 1)
	go func() {
		cli, err := clientv3.New(cfg)
		done <- made{cli, err}
	}()
	var p *probeRun
	var m made
	select {
	case m = <-done:
	case <-time.After(attemptTimeout):
		p = r.startProbe(ctx, context.DeadlineExceeded)
		select {
		case m = <-done:
		case <-p.stopped.Done():
			cancel()
			if m = <-done; m.cli != nil {
				m.cli.Close()
			}
			return nil, p.verdict()
		}
	}
	if m.err != nil {
		cancel()
		if unreached(m.err) || retryable(m.err) {
			// Probed again now: a member stopped as the login began (a
			// leader hands its lead over first) may still have answered
			// the probe p made then.
			return nil, &noLogin{timeout: max(timeout, time.Second), findings: r.probe(context.Background(), r.endpoints), cause: m.err}
		}
		return nil, r.explain(m.err, "")
	}
	context.AfterFunc(m.cli.Ctx(), cancel)
	return m.cli, nil
}

// etcdTLS builds the client's TLS settings; nil (plain) when none are given.
func etcdTLS(o Options) (*tls.Config, error) {
	if o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := fsio.ReadFile(o.CAFile, maxTLSFile)
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
		cert, err := loadKeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd vault: TLS client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// maxTLSFile bounds a CA, certificate or key file read.
const maxTLSFile = 1 << 20

// loadKeyPair reads a client certificate and its key, each bounded.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := fsio.ReadFile(certFile, maxTLSFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := fsio.ReadFile(keyFile, maxTLSFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// maxPasswordFile bounds a password file read.
const maxPasswordFile = 4096

// password is the etcd password: Password, else the first line of
// PasswordFile's contents (its trailing newline dropped).
func (o Options) password() (string, error) {
	if o.PasswordFile == "" {
		return o.Password, nil
	}
	b, err := fsio.ReadFile(o.PasswordFile, maxPasswordFile)
	if err != nil {
		return "", fmt.Errorf("etcd password file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// quietGRPC routes the logs of the gRPC library under the etcd client to
// nowhere, whatever $GRPC_GO_LOG_SEVERITY_LEVEL or $ETCD_CLIENT_DEBUG say:
// stderr is for people and, under serve, the audit wire. gRPC's logger is
// one per process and may only be set before gRPC runs, so it is set once,
// before the first client is made; only this package runs gRPC.
var quietGRPC = sync.OnceFunc(func() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
})

// Create makes an empty shared vault under o.Prefix whose data key is
// wrapped to recipients. A vault already there is kept, never replaced;
// created reports which happened.
func Create(ctx context.Context, o Options, recipients []age.Recipient) (created bool, err error) {
	cli, r, err := dialEtcd(o)
	if err != nil {
		return false, err
	}
	defer cli.Close()
	e := &Vault{reach: r, cli: cli, prefix: o.Prefix, eps: strings.Join(o.Endpoints, ","), timeout: o.Timeout, holdFor: holdIdle}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	return e.createHeader(ctx, etcdFormat, recipients)
}

// createHeader puts a fresh header of format wrapped to recipients unless
// there is one already; created reports which happened.
func (e *Vault) createHeader(ctx context.Context, format string, recipients []age.Recipient) (created bool, err error) {
	k, err := seal.Fresh()
	if err != nil {
		return false, err
	}
	chain, err := extendChain(nil, nil, k)
	if err != nil {
		return false, err
	}
	h, err := sealHeader(format, k, recipients, chain)
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
func (e *Vault) createOnWrite(ctx context.Context) error {
	rs := identity.RecipientsOf(e.ids)
	for i, s := range e.extra {
		r, err := identity.ParseRecipient(s)
		if err != nil {
			return fmt.Errorf("%s: recipients entry %d %w", e.where(), i+1, err)
		}
		if !slices.ContainsFunc(rs, func(x age.Recipient) bool { return fmt.Sprint(x) == s }) {
			rs = append(rs, r)
		}
	}
	if _, err := e.createHeader(ctx, etcdFormat, rs); err != nil {
		return err
	}
	return e.loadHeader(ctx)
}

// Close implements vault.Store.
func (e *Vault) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endSession()
	e.k, e.hdrRev = nil, 0
	return e.cli.Close()
}

func (e *Vault) headerKey() string         { return e.prefix + "vault" }
func (e *Vault) writtenKey() string        { return e.prefix + "written" }
func (e *Vault) recordsKey() string        { return e.prefix + "r/" + e.hdr.VaultID + "/" }
func (e *Vault) recordKey(s string) string { return e.recordsKey() + s }

// where names the vault in messages.
func (e *Vault) where() string { return fmt.Sprintf("etcd vault %s at %s", e.prefix, e.eps) }
