"""Versions, history and compare-and-set (SPEC §11) against a real serve:
every op of it typed, the Conflict of an if_version that lost, and no
value in a result that is not a get's."""

from __future__ import annotations

import unittest

from arca_client import (ArcaError, ChangesResult, Conflict, DestroyResult, HistoryResult, RollbackResult, Secret,
                         UndeleteResult)

from .support import Home

REF = "arca://app/db"
VALUES = ("hist-canary-1", "hist-canary-2", "hist-canary-3")


class HistoryTest(unittest.TestCase):
    def setUp(self) -> None:
        home = Home()
        self.addCleanup(home.cleanup)
        self.c = home.start()
        self.addCleanup(self.c.close)
        for v in VALUES:
            self.c.put(REF, v)

    def assertNoValue(self, result: object) -> None:
        for v in VALUES:
            self.assertNotIn(v, repr(result))

    def assertCode(self, code: str, fn, *args, **kw) -> ArcaError:  # type: ignore[no-untyped-def]
        with self.assertRaises(ArcaError) as cm:
            fn(*args, **kw)
        self.assertEqual(cm.exception.code, code, cm.exception)
        return cm.exception

    def test_history_lists_the_versions_newest_first_without_a_value(self) -> None:
        h = self.c.history(REF)
        self.assertIsInstance(h, HistoryResult)
        self.assertEqual((h.ref, h.env, h.current, h.max_versions, h.deleted_at), (REF, "default", 3, 10, None))
        self.assertEqual([(x.version, x.state) for x in h.versions], [(3, "current"), (2, "previous"), (1, "previous")])
        self.assertLessEqual(h.versions[1].created_at, h.versions[0].created_at)
        self.assertNoValue(h)
        self.assertCode("not_found", self.c.history, "arca://app/never")

    def test_get_reads_an_earlier_version(self) -> None:
        g = self.c.get(REF, version=1)
        self.assertIsInstance(g.value, Secret)
        self.assertEqual((g.value.reveal(), g.version), ("hist-canary-1", 1))
        self.assertEqual(str(g.value), "<redacted>")
        self.assertEqual(self.c.get(REF).version, 3)
        e = self.assertCode("not_found", self.c.get, REF, version=9)
        self.assertIn("version 9", e.message)
        self.assertNoValue(e)

    def test_rollback_writes_an_earlier_value_as_a_new_version(self) -> None:
        r = self.c.rollback(REF, 1)
        self.assertIsInstance(r, RollbackResult)
        self.assertEqual((r.version, r.rolled_back_from, r.created), (4, 1, False))
        self.assertNoValue(r)
        self.assertEqual(self.c.get(REF).value.reveal(), "hist-canary-1")
        e = self.assertCode("not_found", self.c.rollback, REF, 7)
        self.assertIn("version 7", e.message)
        c = self.assertCode("conflict", self.c.rollback, REF, 2, if_version=3)
        self.assertIsInstance(c, Conflict)
        self.assertEqual(c.current_version, 4)  # type: ignore[attr-defined]

    def test_rm_undelete_and_list_deleted(self) -> None:
        self.c.rm(REF)
        self.assertCode("not_found", self.c.get, REF)
        self.assertEqual(self.c.list().records, ())
        listed = self.c.list(deleted=True)
        self.assertEqual([(x.ref, x.version) for x in listed.records], [(REF, 3)])
        self.assertIsNotNone(listed.records[0].deleted_at)
        h = self.c.history(REF)
        self.assertEqual((h.current, h.deleted_at, h.versions[0].state), (None, listed.records[0].deleted_at, "deleted"))
        u = self.c.undelete(REF)
        self.assertIsInstance(u, UndeleteResult)
        self.assertEqual((u.version, u.undeleted), (4, True))
        self.assertEqual(self.c.get(REF).value.reveal(), "hist-canary-3")
        self.assertCode("not_found", self.c.undelete, REF)

    def test_destroy_erases_versions_and_then_the_name(self) -> None:
        d = self.c.destroy(REF, versions=[1, 2])
        self.assertIsInstance(d, DestroyResult)
        self.assertEqual((d.destroyed, d.removed), ((1, 2), False))
        self.assertEqual([x.version for x in self.c.history(REF).versions], [3])
        e = self.assertCode("not_found", self.c.destroy, REF, versions=[2])
        self.assertIn("version 2", e.message)
        d = self.c.destroy(REF)
        self.assertEqual((d.destroyed, d.removed), ((3,), True))
        h = self.c.history(REF)
        self.assertEqual((h.current, h.versions), (None, ()))
        self.assertCode("not_found", self.c.get, REF)
        # Numbering continues past the destroyed versions.
        self.assertEqual(self.c.put(REF, "after").version, 4)

    def test_changes_from_a_cursor(self) -> None:
        first = self.c.changes()
        self.assertIsInstance(first, ChangesResult)
        self.assertEqual((first.changes, first.reset, first.truncated), ((), False, False))
        self.assertEqual(self.c.changes(since=first.cursor).changes, ())
        self.c.put("arca://app/api", "hist-canary-2")
        self.c.rm(REF)
        got = self.c.changes(since=first.cursor)
        self.assertEqual(sorted((x.ref, x.version, x.state) for x in got.changes),
                         [("arca://app/api", 1, "current"), (REF, 3, "deleted")])
        self.assertNoValue(got)
        self.assertEqual(self.c.changes(since=got.cursor).changes, ())
        self.assertCode("bad_request", self.c.changes, since="not-a-cursor")

    def test_put_with_if_version_wins_once(self) -> None:
        got = self.c.get(REF)
        self.assertEqual(self.c.put(REF, "mine", if_version=got.version).version, 4)
        with self.assertRaises(Conflict) as cm:
            self.c.put(REF, "theirs", if_version=got.version)
        e = cm.exception
        self.assertEqual((e.code, e.current_version), ("conflict", 4))
        self.assertNotIn("theirs", str(e) + repr(e))
        self.assertEqual(self.c.get(REF).value.reveal(), "mine")
        # 0: no current record.
        self.assertEqual(self.c.put("arca://app/new", "x", if_version=0).version, 1)
        with self.assertRaises(Conflict) as cm:
            self.c.rotate("arca://app/none", "x", if_version=2)
        self.assertEqual(cm.exception.current_version, 0)

    def test_writers_racing_with_one_if_version_pipelined_one_wins(self) -> None:
        futures = [self.c.submit_put(REF, f"racer-{i}", if_version=3) for i in range(20)]
        won, lost = [], []
        for f in futures:
            try:
                won.append(f.result(timeout=30))
            except Conflict as e:
                lost.append(e.current_version)
        self.assertEqual([p.version for p in won], [4])
        self.assertEqual(lost, [4] * 19)
        self.assertEqual(self.c.history(REF).current, 4)

    def test_a_field_of_the_wrong_shape_is_refused_before_it_is_sent(self) -> None:
        with self.assertRaises(TypeError):
            self.c.put(REF, "x", if_version="1")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            self.c.get(REF, version=True)  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            self.c.put(REF, "x", if_version=-1)
        with self.assertRaises(TypeError):
            self.c.destroy(REF, versions=["1"])  # type: ignore[list-item]
        self.assertEqual(self.c.get(REF).version, 3)


if __name__ == "__main__":
    unittest.main()
