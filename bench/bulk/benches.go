package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arca-secrets/arca/bench/rig"
)

// migrateArgs are the arguments of the migration every arca run times.
func migrateArgs(in input) []string {
	return []string{"migrate", "--from", "dotenv", "--ns", ns, in.path}
}

// benchFileVault times, on the default file vault: migrate (each run into
// a fresh vault), backup of the last vault migrated into, and restore of
// that backup into a fresh vault opened by the same identity. The first
// rows are the baselines: arca list on an empty vault, the least a verb
// costs, and the same with its collector run.
func benchFileVault(o options, root string, in input) ([]row, error) {
	rows, err := benchBaselines(o, root)
	if err != nil {
		return nil, err
	}
	mig := row{what: "arca migrate --from dotenv (file vault)", n: o.n, input: in.size}
	var last home
	for r := range o.runs {
		progress("migrate %d secrets into a file vault, run %d/%d", o.n, r+1, o.runs)
		if last, err = initHome(o.arca, root, fmt.Sprintf("migrate-%d", r), nil); err != nil {
			return rows, err
		}
		s, err := last.run(migrateArgs(in)...)
		if err == nil {
			err = checkCreated("migrate", s, o.n)
		}
		if err != nil {
			return rows, err
		}
		mig.add(s)
	}
	if mig.output, err = fileSize(last.vaultFile()); err != nil {
		return rows, err
	}
	rows = append(rows, mig)
	if err := checkValues(last, in); err != nil {
		return rows, fmt.Errorf("after migrate: %w", err)
	}
	more, err := benchBackupRestore(o, root, last, in)
	return append(rows, more...), err
}

// benchBaselines times arca list on a fresh, empty file vault: as it is
// (it allocates too little for its collector ever to run), and with
// GOGC=1, which makes the collector run. A verb that allocates a few MiB
// runs it whatever its input; its code and the tables it reads (some
// 1.2 MiB of the binary paged in) cost the same for any input.
func benchBaselines(o options, root string) ([]row, error) {
	idle := row{what: "arca list (empty vault: baseline)", baseline: idleBaseline}
	gc := row{what: "arca list, collector run (GOGC=1: baseline)", baseline: gcBaseline}
	for i := range o.runs {
		h, err := initHome(o.arca, root, fmt.Sprintf("baseline-%d", i), nil)
		if err != nil {
			return nil, err
		}
		s, err := h.run("list")
		if err != nil {
			return nil, err
		}
		idle.add(s)
		if s, err = h.runWith([]string{"GOGC=1"}, "list"); err != nil {
			return nil, err
		}
		gc.add(s)
	}
	return []row{idle, gc}, nil
}

// benchBackupRestore times arca vault backup of src's vault, then arca
// vault restore of that backup into a fresh home that has src's identity
// (the backup is wrapped to the vault's recipients).
func benchBackupRestore(o options, root string, src home, in input) ([]row, error) {
	vaultSize, err := fileSize(src.vaultFile())
	if err != nil {
		return nil, err
	}
	bk := row{what: "arca vault backup (file vault)", n: o.n, input: vaultSize}
	rs := row{what: "arca vault restore (into an empty vault)", n: o.n}
	for r := range o.runs {
		progress("backup and restore %d records, run %d/%d", o.n, r+1, o.runs)
		file := filepath.Join(root, fmt.Sprintf("backup-%d.vault", r))
		s, err := src.run("vault", "backup", file)
		if err != nil {
			return nil, err
		}
		bk.add(s)
		if rs.input, err = fileSize(file); err != nil {
			return nil, fmt.Errorf("vault backup wrote no file: %w", err)
		}
		dst, err := initHome(o.arca, root, fmt.Sprintf("restore-%d", r), withIdentityOf(src))
		if err != nil {
			return nil, err
		}
		s, err = dst.run("vault", "restore", file)
		if err == nil {
			err = checkCreated("vault restore", s, o.n)
		}
		if err != nil {
			return []row{bk}, err
		}
		rs.add(s)
		if r == o.runs-1 {
			if err := checkValues(dst, in); err != nil {
				return []row{bk, rs}, fmt.Errorf("after restore: %w", err)
			}
		}
	}
	return []row{bk, rs}, nil
}

// withIdentityOf is a setup for initHome that copies src's identity into
// the new home, so that its init keeps it rather than making a new one.
func withIdentityOf(src home) func(home) error {
	return func(h home) error {
		b, err := os.ReadFile(src.identity())
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(h.identity()), 0o700); err != nil {
			return err
		}
		return os.WriteFile(h.identity(), b, 0o600)
	}
}

// fileSize is the size of the file at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// benchEtcd times migrate into a vault of kind etcd on a new three-member
// loopback cluster: each run in a fresh home with its own key prefix. Its
// baseline is arca list of the empty vault first, with its collector run
// (the etcd client costs more memory than the file vault before any work).
func benchEtcd(o options, root string, in input) ([]row, error) {
	base := row{what: "arca list, etcd vault, collector run (GOGC=1: baseline)", baseline: etcdBaseline}
	r := row{what: "arca migrate --from dotenv (etcd vault, 3 members)", n: o.n, input: in.size, etcd: true}
	rows := func() []row { return []row{base, r} }
	progress("starting a 3-member etcd cluster")
	c, err := startCluster(filepath.Join(root, "etcd"), 3)
	if err != nil {
		return rows(), err
	}
	defer c.Kill()
	for i := range o.runs {
		progress("migrate %d secrets into an etcd vault, run %d/%d", o.n, i+1, o.runs)
		toml := rig.EtcdConfig(c.AllEndpoints(), fmt.Sprintf("/arca-bench/run%d/", i), time.Minute)
		h, err := initHome(o.arca, root, fmt.Sprintf("etcd-%d", i), func(h home) error { return h.config(toml) })
		if err != nil {
			return rows(), err
		}
		s, err := h.runWith([]string{"GOGC=1"}, "list")
		if err != nil {
			return rows(), err
		}
		base.add(s)
		s, err = h.run(migrateArgs(in)...)
		if err == nil {
			err = checkCreated("migrate (etcd)", s, o.n)
		}
		if err != nil {
			return rows(), err
		}
		r.add(s)
		if i == o.runs-1 {
			if err := checkValues(h, in); err != nil {
				return rows(), fmt.Errorf("after migrate: %w", err)
			}
		}
	}
	return rows(), nil
}
