// Command bulk times arca's bulk verbs on the built binary: migrate of a
// dotenv file of n secrets into a file vault (and, with -etcd, into a vault
// on a three-member loopback etcd cluster), vault backup of the result, and
// vault restore of that backup into an empty vault. With -peer it also times
// the import of the same secrets by the closest peer, arenzana/arca, in its
// own fresh store.
//
// It is run by hand, not by the tests:
//
//	go build -o /tmp/arca-bench ./cmd/arca
//	go run ./bench/bulk -arca /tmp/arca-bench [-peer PATH] [-n 10000] [-etcd] [-runs 3]
//
// Every arca run gets a fresh HOME and an environment of PATH, HOME and
// LANG=C.UTF-8 only, so nothing on the machine points it at a real vault.
// Wall time is measured around the child process; peak RSS is the child's
// (getrusage's ru_maxrss, KiB on Linux). The table it prints is plain text,
// meant to be pasted into docs/performance.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// The namespace the secrets are migrated into.
const ns = "bulk"

// options are the command line.
type options struct {
	arca string // the arca binary
	peer string // the peer's binary; "" skips it
	n    int    // secrets in the input
	runs int    // runs of each arca verb; the median is reported
	etcd bool   // also migrate into an etcd vault
	keep bool   // keep the temp dir
}

// parseFlags reads the command line into options.
func parseFlags() options {
	var o options
	flag.StringVar(&o.arca, "arca", "", "the arca binary to time (required)")
	flag.StringVar(&o.peer, "peer", "", "the arenzana/arca binary to time beside it (optional)")
	flag.IntVar(&o.n, "n", 10000, "secrets in the input")
	flag.IntVar(&o.runs, "runs", 3, "runs of each arca verb (the median wall time is reported)")
	flag.BoolVar(&o.etcd, "etcd", false, "also migrate into a vault on a 3-member loopback etcd cluster ("+launch.Binary+")")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (its path is printed on stderr)")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	if o.arca == "" || o.n < 1 || o.runs < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bulk:", err)
		os.Exit(1)
	}
}

// run does every measurement o asks for in a new temp dir and prints the
// table on w.
func run(o options, w io.Writer) error {
	var err error
	if o.arca, err = filepath.Abs(o.arca); err != nil {
		return err
	}
	if o.peer != "" {
		if o.peer, err = filepath.Abs(o.peer); err != nil {
			return err
		}
	}
	root, err := os.MkdirTemp("", "arca-bulk-")
	if err != nil {
		return err
	}
	if o.keep {
		progress("temp dir %s (kept)", root)
	} else {
		defer os.RemoveAll(root)
	}
	in, err := writeInput(root, o.n)
	if err != nil {
		return err
	}
	rows, err := measureAll(o, root, in)
	printReport(w, o, in, rows)
	return err
}

// measureAll runs each measurement in turn. It returns the rows measured
// so far with the first error, so a failure late on still prints the rest.
func measureAll(o options, root string, in input) ([]row, error) {
	var rows []row
	fileRows, err := benchFileVault(o, root, in)
	rows = append(rows, fileRows...)
	if err != nil {
		return rows, err
	}
	if o.etcd {
		more, err := benchEtcd(o, root, in)
		rows = append(rows, more...)
		if err != nil {
			return rows, fmt.Errorf("etcd: %w", err)
		}
	}
	if o.peer != "" {
		r, err := benchPeer(o, root, in)
		if err != nil {
			return rows, fmt.Errorf("peer: %w", err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// progress reports what is being done on stderr, away from the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bulk: "+format+"\n", args...)
}
