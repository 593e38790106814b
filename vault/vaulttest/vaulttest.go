// Package vaulttest is the conformance suite every vault.Store backend
// passes, in the spirit of testing/fstest: a backend that differs from
// another in any observable way fails it.
//
// A backend's test calls Run with a function that makes a fresh, empty vault
// and returns a Harness for it:
//
//	vaulttest.Run(t, func(t *testing.T, now func() time.Time) vaulttest.Harness {
//		… create an empty vault whose records are stamped with now …
//		return vaulttest.Harness{Open: …, Corrupt: …}
//	})
//
// Every subtest gets its own vault and its own clock. The clock only moves
// when the suite moves it, and it hands out times in a non-UTC zone with
// nanoseconds, so a backend must store times to the nanosecond and return
// them in UTC.
//
// Where the vault.Store contract leaves room, the suite pins what the file
// backend does, so that backends agree:
//
//   - a put after a rotate keeps the earlier rotated_at;
//   - Meta.Created is set only on the result of the put that created the
//     record (and on what approve sees for it), never by Get or List;
//   - approve is not called when Apply fails before there is a change to
//     approve: ErrNotFound, an unknown Kind, a record that fails to
//     authenticate;
//   - a record that fails to authenticate makes Get, List, and a put or
//     rotate of it fail with an error other than ErrNotFound that quotes
//     neither its name nor its value; rm removes it; Check counts it in
//     Records and reports a problem;
//   - a refused approve's error comes back from Apply (errors.Is);
//   - a batch is prepared whole before its first unit is approved: a
//     write that cannot be prepared (ErrNotFound, a restore without a
//     version) fails the batch with nothing approved, when it is in the
//     first unit (which every backend makes at least a few writes long);
//   - a restore over a record that exists is not Created, and a batch's
//     writes share one time;
//   - a group's write of a record an earlier write of the group created
//     is not Created; a Commit or Add on an ended group is an error.
//
// The history rules (vault.Step, SPEC §11) are held through each of the
// three ways a write reaches a vault, Apply, ApplyBatch and Group, as cases
// named for the rule and the way (HistoryRollbackViaBatch): numbering that
// never repeats, max_versions, soft delete, undelete and its expiry (by the
// next write of the name, or Check), rollback, destroy, if_version (and a
// race of 50 handles on it), restore that never lowers a version, Chains,
// and Changes with its cursors. Where Step leaves room, the suite pins:
//
//   - approve is not called for a write Step refuses (a conflict, a
//     version not kept) and the name is left exactly as it was;
//   - reads show what is kept whatever the settings: a soft-deleted name
//     past keep_deleted is still listed by ListDeleted until a write of it
//     or a Check erases it;
//   - Check's Report.Versions counts every kept earlier version, a
//     soft-deleted name's removed version included;
//   - Changes lists names in the order of their last change, each with
//     Change.At that change's time in UTC; a cursor from before a Rekey
//     answers Reset; a handle that polls Changes while other handles
//     write misses no change, and reads what they left.
package vaulttest

import (
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// Harness is one vault under test.
type Harness struct {
	// Open returns a new handle on the SAME underlying vault. The suite
	// calls it several times and closes every handle it opens.
	Open func() (vault.Store, error)
	// Corrupt flips one byte of the sealed ciphertext of some stored record.
	// The suite stores exactly one record before calling it.
	Corrupt func() error
}

// Run runs the suite; newVault makes a fresh empty vault whose records are
// stamped with now.
func Run(t *testing.T, newVault func(t *testing.T, now func() time.Time) Harness) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			c.run(&fixture{t: t, h: newVault(t, clk.now), clock: clk})
		})
	}
}

type testCase struct {
	name string
	run  func(*fixture)
}

func cases() []testCase {
	return append([]testCase{
		{"PutCreatesVersion1", testPutCreates},
		{"PutAgainIncrementsVersion", testPutAgain},
		{"GetReturnsExactBytes", testGetExact},
		{"GetMissingIsNotFound", testGetMissing},
		{"RotateMissingIsNotFound", testRotateMissing},
		{"RotateExisting", testRotate},
		{"Remove", testRemove},
		{"UnknownKindIsRefused", testUnknownKind},
		{"ListEmpty", testListEmpty},
		{"ListSortedWithMetadata", testListSorted},
		{"ApproveErrorAbortsPut", testApproveAbortsPutNew},
		{"ApproveErrorAbortsOverwrite", testApproveAbortsPutExisting},
		{"ApproveErrorAbortsRotate", testApproveAbortsRotate},
		{"ApproveErrorAbortsRemove", testApproveAbortsRemove},
		{"SecondHandleSeesWrites", testSecondHandle},
		{"ConcurrentWritersOwnHandles", testConcurrentOwnHandles},
		{"ConcurrentWritersSharedHandle", testConcurrentSharedHandle},
		{"TamperedRecordIsAnError", testTamper},
		{"CheckHealthy", testCheckHealthy},
		{"BatchLands", testBatchLands},
		{"BatchRefusals", testBatchRefusals},
		{"BatchRestore", testBatchRestore},
		{"BatchFailsPartWay", testBatchFailsPartWay},
		{"GroupLands", testGroupLands},
		{"GroupDropsAlone", testGroupDropsAlone},
		{"GroupAbort", testGroupAbort},
		{"GroupEnds", testGroupEnds},
		{"GroupHistoryInTurn", testGroupHistoryInTurn},
		{"BatchHistory", testBatchHistory},
		{"ApproveErrorAbortsHistory", testApproveAbortsHistory},
		{"ChangesPagesOneCommit", testChangesPagesOneCommit},
		{"RekeyKeepsHistory", testRekeyKeepsHistory},
		{"ChangesWhileWriting", testChangesWhileWriting},
	}, viaEveryPath(historyCases())...)
}
