package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/internal/termsafe"
)

// auditMerge is `arca audit --merge FILE...`: the events of trails from
// several machines in one time-ordered view, each with its file. Every
// file's chain is verified on its own first; when one does not hold, the
// merge refuses: it names each file that breaks and the line, on stderr,
// prints no event, and exits 1. A view that mixed a tampered trail's
// events with the others' would vouch for them; `arca audit FILE` still
// reads such a file alone.
func (c *cli) auditMerge(files []string, f trail.Filter, asJSON bool) error {
	if err := distinctTrails(files); err != nil {
		return err
	}
	named := make([]trail.Named, 0, len(files))
	broken := 0
	for _, path := range files {
		fh, err := openTrail(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		// The file verified is the file merged: read again from its
		// start through the same handle, never opened anew by its name.
		_, err = trail.Verify(fh, nil)
		var b *trail.Break
		switch {
		case errors.As(err, &b):
			broken++
			fmt.Fprintf(c.stderr, "arca: %s: BROKEN at line %d: %s\n", termsafe.Escape(path), b.Line, termsafe.Escape(b.Reason))
		case err != nil:
			return opErrorf("%s: %v", path, err)
		}
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			return opErrorf("%s: %v", path, err)
		}
		named = append(named, trail.Named{Name: path, R: fh})
	}
	if broken > 0 {
		return opErrorf("%d of %d trails do not hold: nothing merged (arca audit FILE reads one alone)", broken, len(files))
	}
	out := c.stdout
	if asJSON {
		out = c.raw.stdout // each line exactly as it is in its trail
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	if !asJSON {
		fmt.Fprintf(w, "%-16s ", "FILE")
		printHeader(w)
	}
	err := trail.Merge(named, f, func(m trail.Merged) error { return printMerged(w, m, asJSON) })
	if err != nil {
		return opErrorf("%v", err)
	}
	return nil
}

// printMerged prints an event of a merge: a row of the table after its
// file, or, with --json, {"file":FILE,"line":N,"event":LINE} with the
// event's line as it is in the trail, so that it still hashes to what the
// next line's prev says.
func printMerged(w io.Writer, m trail.Merged, asJSON bool) error {
	if asJSON {
		b := append(jsonstr.Append([]byte(`{"file":`), m.Name), `,"line":`...)
		b = fmt.Appendf(b, "%d,\"event\":%s}\n", m.At, m.Line)
		_, err := w.Write(b)
		return err
	}
	fmt.Fprintf(w, "%-16s ", shown(m.Name))
	return printEvent(w, m.Entry, false)
}
