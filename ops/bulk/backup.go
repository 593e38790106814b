package bulk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
)

// BackupResult says what a backup holds.
type BackupResult struct {
	Env        string
	Vault      string
	Path       string
	Records    int // names with a current record
	Versions   int // earlier versions kept, of every name
	Deleted    int // names without a current record: soft-deleted, or their highest version only
	Recipients []string
}

// Held says what the backup holds beyond its records, for messages: ""
// when it holds nothing more, else "N earlier versions, M deleted names".
func (r BackupResult) Held() string {
	if r.Versions == 0 && r.Deleted == 0 {
		return ""
	}
	return fmt.Sprintf("%d earlier versions, %d deleted names", r.Versions, r.Deleted)
}

// Backup writes every name of env's vault, as its chain (its current
// record, every earlier version it keeps, its soft delete and its highest
// version, each version with its times), to a new file vault at path
// whose data key is wrapped to the vault's current recipients: one
// self-contained file that check can verify and Restore can write into a
// vault of either kind. path must not exist; the file appears whole or not
// at all. Every name passes the guardrails as a get (one denied refuses
// the backup): a backup restored into another env hands its values out
// there. One backup event is written, and flushed, before the file is put
// in place.
func Backup(ctx context.Context, s *ops.Service, env, path string) (BackupResult, error) {
	resolved, name, k, err := s.Keyed(env)
	res := BackupResult{Env: resolved, Vault: name, Path: path}
	if err != nil {
		return res, err
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return res, ops.Errorf(manifest.BadRequest, "backup file %s already exists; nothing was written (name a new file)", path)
	}
	if res.Recipients, err = k.Recipients(ctx); err != nil {
		return res, ops.AsError(err)
	}
	st, err := s.Store(res.Env)
	if err != nil {
		return res, err
	}
	chains, err := st.Chains(ctx)
	if err != nil {
		return res, ops.AsError(err)
	}
	// A backup restored elsewhere hands its values out there: every
	// name passes the guardrails as a get, as export's records do.
	if err := bulkCheck(s, res.Env, "get", "env "+res.Env, Chains(chains)); err != nil {
		return res, err
	}
	for i := range chains {
		if chains[i].HasCurrent {
			res.Records++
		} else {
			res.Deleted++
		}
		res.Versions += len(chains[i].Previous)
	}
	tmp, err := writeBackup(ctx, s, res, chains)
	defer removeBackupTemp(tmp)
	if err != nil {
		return res, err
	}
	what := fmt.Sprintf("%d records", res.Records)
	if held := res.Held(); held != "" {
		what += " (" + held + ")"
	}
	ch := s.Begin("backup", res.Env, "", what+" to "+path)
	if err := ch.Audit(0); err != nil {
		return res, err
	}
	if err := placeNew(tmp, path); err != nil {
		return res, ch.Fail(ops.Errorf(manifest.OpError, "backup of env %q was audited but not written: %v", res.Env, err))
	}
	return res, nil
}

// writeBackup writes chains into a new file vault beside res.Path,
// wrapped to res.Recipients and opened with the identity of env's vault,
// and returns its path.
func writeBackup(ctx context.Context, s *ops.Service, res BackupResult, chains []vault.Chain) (string, error) {
	_, vc, err := s.Config().VaultFor(res.Env)
	if err != nil {
		return "", err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := res.Path + ".partial-" + hex.EncodeToString(b[:])
	bc := ops.VaultConfig{Kind: ops.KindFile, Path: tmp, Identity: vc.Identity}
	rs, err := ops.ParseRecipients("recipients of env "+res.Env, res.Recipients)
	if err != nil {
		return tmp, err
	}
	if _, err := s.CreateVault(ctx, "backup", bc, rs); err != nil {
		return tmp, ops.AsError(err)
	}
	bst, err := s.OpenVault("backup", bc)
	if err != nil {
		return tmp, ops.AsError(err)
	}
	defer bst.Close()
	bst.SetHistory(backupHistory())
	if _, err := bst.ApplyBatch(ctx, restores(chains), func([]vault.Meta) error { return nil }); err != nil {
		return tmp, ops.AsError(err)
	}
	return tmp, nil
}

// backupHistory is the history a backup file is written and read under:
// every version a vault can keep, and soft-deleted names kept however old,
// so that neither writing a backup nor checking it erases anything of
// what the vault held.
func backupHistory() vault.History {
	return vault.History{MaxVersions: vault.MaxMaxVersions, KeepDeleted: math.MaxInt64}
}

// restores is the batch that writes names whole, as their chains hold
// them: every version with its times.
type restores []vault.Chain

func (cs restores) Len() int { return len(cs) }

func (cs restores) At(i int) vault.Write {
	return vault.Write{Kind: vault.Restore, Name: cs[i].Name, Chain: &cs[i]}
}

// placeNew moves the finished file tmp to path, which must not exist: a
// hard link refuses an existing path atomically. Where the filesystem has
// no hard links (FAT, many network mounts), the file is copied into a
// path created exclusively, and synced.
func placeNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if err != nil {
		if err := copyNew(tmp, path); err != nil {
			return err
		}
	}
	// In place: the backup is there, whatever the removal of tmp says.
	_ = fsio.SyncDir(filepath.Dir(path))
	return nil
}

// copyNew copies the file src to a new file dst (mode 0600), synced; a dst
// that exists is refused, and a half-copied dst removed.
func copyNew(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

// removeBackupTemp removes what writing a backup at tmp left behind.
func removeBackupTemp(tmp string) {
	if tmp == "" {
		return
	}
	os.Remove(tmp)
	os.Remove(tmp + ".lock")
	os.Remove(tmp + ".tmp")
}

// openBackup opens the backup at path with the identity of env's vault.
func openBackup(s *ops.Service, env, path string) (vault.Store, error) {
	_, vc, err := s.Config().VaultFor(env)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, ops.Errorf(manifest.BadRequest, "backup file %s: %v", path, errors.Unwrap(err))
	}
	st, err := s.OpenVault("backup", ops.VaultConfig{Kind: ops.KindFile, Path: path, Identity: vc.Identity})
	if err != nil {
		return nil, ops.AsError(err)
	}
	st.SetHistory(backupHistory())
	return st, nil
}

// Restore writes the names of the backup at path into env's vault, of
// either kind, each whole with every version and time the backup holds
// (a backup made before vaults kept history holds current records only):
// an Import of them, so records that exist are skipped unless overwrite,
// each name written gets its put event, and on the file vault it is all
// or nothing. No version is ever lowered (vault.Step's rule for a
// restore): into a name the vault knows, the backup's versions above the
// vault's highest are added, and a current value that is not above it is
// written as a new version.
func Restore(ctx context.Context, s *ops.Service, env, path string, overwrite, dryRun bool) (Result, error) {
	env, err := s.ResolveEnv(env)
	if err != nil {
		return Result{}, err
	}
	bst, err := openBackup(s, env, path)
	if err != nil {
		return Result{Env: env}, err
	}
	chains, err := bst.Chains(ctx)
	if err != nil {
		bst.Close()
		return Result{Env: env}, ops.AsError(err)
	}
	items := Chains(chains)
	source := "backup " + path
	// Checked before the vault is made: a refused restore makes nothing.
	err = bulkCheck(s, env, "put", source, items)
	if err == nil && !dryRun {
		err = createLike(ctx, s, env, bst)
	}
	bst.Close()
	if err != nil {
		return Result{Env: env}, ops.AsError(err)
	}
	return Import(ctx, s, Request{Env: env, Source: source, Items: items, Overwrite: overwrite, DryRun: dryRun})
}

// createLike makes env's vault, when there is none yet (a new cluster, a
// file not made by init), wrapped to the recipients of like: restored, a
// team's vault opens for the whole team again. A vault that exists is kept
// as it is.
func createLike(ctx context.Context, s *ops.Service, env string, like vault.Store) error {
	k, ok := like.(vault.Keyed)
	if !ok {
		return nil
	}
	list, err := k.Recipients(ctx)
	if err != nil {
		return err
	}
	rs, err := ops.ParseRecipients("recipients of the backup", list)
	if err != nil {
		return err
	}
	name, vc, err := s.Config().VaultFor(env)
	if err != nil {
		return err
	}
	_, err = s.CreateVault(ctx, name, vc, rs)
	return err
}

// CheckBackup probes the backup at path as Check probes a vault: the
// identity of env's vault unwraps its key, every record authenticates. It
// is audited as a check of env with the file named in the message.
func CheckBackup(ctx context.Context, s *ops.Service, env, path string) (ops.CheckResult, error) {
	env, err := s.ResolveEnv(env)
	if err != nil {
		return ops.CheckResult{}, err
	}
	ch := s.Begin("check", env, "", "backup file "+path)
	res := ops.CheckResult{Env: env, Vault: path, Kind: ops.KindFile, Problems: []string{}}
	if reason, denied := s.Config().Guardrail(env, "check", "", ""); denied {
		return res, ch.Fail(ops.Errorf(manifest.Denied, "denied by guardrail: %s", reason))
	}
	if _, err := os.Stat(path); err != nil {
		return res, ch.Fail(ops.Errorf(manifest.BadRequest, "backup file %s: %v", path, errors.Unwrap(err)))
	}
	bst, err := openBackup(s, env, path)
	var rep vault.Report
	if err == nil {
		rep, err = bst.Check(ctx)
		bst.Close()
	}
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	rep.Problems = backupProblems(rep.Problems, s.VaultProblems(ops.VaultConfig{Kind: ops.KindFile, Path: path}), path)
	res.Records, res.Problems, res.Info = rep.Records, append(res.Problems, rep.Problems...), rep.Info
	res.Versions = rep.Versions // a backup keeps deleted names however old: it erases none
	res.Healthy = len(res.Problems) == 0
	return res, ch.Record(0)
}

// backupProblems is what a check of the backup at path found, without the
// file-mode problems modes lists, which are a vault's (its directory's,
// its identity's): a backup is made to be copied elsewhere. What it keeps
// of them is the backup file's own mode, which is reported.
func backupProblems(found, modes []string, path string) []string {
	out := make([]string, 0, len(found))
	for _, p := range found {
		if !slices.Contains(modes, p) {
			out = append(out, p)
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		out = append(out, fmt.Sprintf("backup file %s is readable by other users (mode %04o): chmod go-rwx %s", path, fi.Mode().Perm(), path))
	}
	return out
}
