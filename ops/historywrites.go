package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/vault"
)

// The writes of versions and history (SPEC §11): rollback, undelete and
// destroy, each one change through Writes as put, rotate and rm are.

func rollbackChange(c *call, req *Request) vault.Write {
	return vault.Write{Kind: vault.Rollback, Name: c.ref.Path(), Version: req.Version, IfVersion: req.IfVersion}
}

func rollbackResult(c *call, m vault.Meta) Result {
	r := RollbackResult{PutResult: putResult(c, m).(PutResult)}
	if m.Touch != nil {
		r.RolledBackFrom = m.Touch.From
	}
	return r
}

func undeleteChange(c *call, req *Request) vault.Write {
	return vault.Write{Kind: vault.Undelete, Name: c.ref.Path(), IfVersion: req.IfVersion}
}

func undeleteResult(c *call, m vault.Meta) Result {
	return UndeleteResult{PutResult: putResult(c, m).(PutResult), Undeleted: true}
}

func destroyChange(c *call, req *Request) vault.Write {
	vs, _ := req.destroyVersions() // checked by validate
	return vault.Write{Kind: vault.Destroy, Name: c.ref.Path(), Versions: vs}
}

func destroyResult(c *call, m vault.Meta) Result {
	r := DestroyResult{Ref: c.ref.Canonical(), Env: c.env, Destroyed: []uint64{}, Decision: c.decision()}
	if m.Touch != nil {
		r.Destroyed, r.Removed = m.Touch.Erased, m.Touch.Gone
	}
	return r
}

// touched is what the audit event of a write says it did to the name's
// versions beyond the version it records (m.Touch): versions only, never
// a value; "" when it did nothing more (an rm that soft-deletes records
// the version it removed, as rm always has). A destroy says it is a
// deliberate loss.
func touched(op string, m vault.Meta) string {
	t := m.Touch
	if t == nil {
		return ""
	}
	var parts []string
	switch {
	case op == "destroy":
		parts = append(parts, "destroyed "+versionList(t.Erased)+": a deliberate loss, never to be read or restored again")
	case op == "rollback":
		parts = append(parts, fmt.Sprintf("rolled back from version %d", t.From))
	case op == "undelete":
		parts = append(parts, fmt.Sprintf("undeleted version %d", t.From))
	}
	if op != "destroy" && len(t.Erased) > 0 {
		parts = append(parts, "erased "+versionList(t.Erased))
	}
	if t.Gone {
		parts = append(parts, "no version of the name is left")
	}
	return strings.Join(parts, "; ")
}

// versionList is "version 3" or "versions 1, 2".
func versionList(vs []uint64) string {
	if len(vs) == 1 {
		return "version " + strconv.FormatUint(vs[0], 10)
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatUint(v, 10)
	}
	return "versions " + strings.Join(s, ", ")
}
