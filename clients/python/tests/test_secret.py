"""Secret prints as <redacted> however it is printed; results, times."""

from __future__ import annotations

import copy
import json
import logging
import pickle
import unittest
from dataclasses import asdict
from datetime import datetime, timezone

from arca_client import Got, ProtocolError, Secret
from arca_client.results import parse_time

CANARY = "canary-7f3a9c-do-not-print"


class SecretTest(unittest.TestCase):
    def test_it_never_prints(self) -> None:
        s = Secret(CANARY)
        for text in (str(s), repr(s), f"{s}", f"{s!r}", f"{s:>30}", "%s" % s, "%r" % s, "{}".format(s),
                     str([s]), str({"k": s}), repr((s,))):
            self.assertNotIn(CANARY, text)
            self.assertIn("<redacted>", text)
        self.assertEqual(s.reveal(), CANARY)

    def test_it_does_not_leave_the_process_by_accident(self) -> None:
        s = Secret(CANARY)
        for dump in (pickle.dumps, lambda x: json.dumps({"v": x})):
            with self.assertRaises(TypeError) as cm:
                dump(s)
            self.assertNotIn(CANARY, str(cm.exception))
        # Immutable: a copy is the same object (and dataclasses.asdict,
        # which deep-copies, keeps it wrapped).
        self.assertIs(copy.copy(s), s)
        self.assertIs(copy.deepcopy(s), s)
        with self.assertRaises(TypeError):
            hash(s)
        with self.assertRaises(AttributeError):
            s._value = "x"  # type: ignore[misc]

    def test_equality(self) -> None:
        self.assertEqual(Secret("a"), Secret("a"))
        self.assertNotEqual(Secret("a"), Secret("b"))
        self.assertNotEqual(Secret("a"), "a", "a Secret is no str")

    def test_only_a_str(self) -> None:
        with self.assertRaises(TypeError) as cm:
            Secret(CANARY.encode())  # type: ignore[arg-type]
        self.assertNotIn(CANARY, str(cm.exception))

    def test_a_result_in_a_log(self) -> None:
        t = datetime(2026, 1, 1, tzinfo=timezone.utc)
        g = Got("arca://app/db", "default", Secret(CANARY), 1, t, t)
        records = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        log = logging.getLogger("arca-client-test")
        log.addHandler(handler)
        self.addCleanup(log.removeHandler, handler)
        log.warning("got %s and %r", g, g)
        log.warning("as a dict: %s", asdict(g))
        self.assertEqual(len(records), 2)
        for r in records:
            self.assertNotIn(CANARY, r.getMessage())


class TimeTest(unittest.TestCase):
    def test_nanoseconds(self) -> None:
        t = parse_time("2026-11-30T08:14:14.381353202Z")
        self.assertEqual(t, datetime(2026, 11, 30, 8, 14, 14, 381353, tzinfo=timezone.utc))

    def test_cut_never_rounded(self) -> None:
        self.assertEqual(parse_time("2026-12-31T23:59:59.999999999Z"),
                         datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc))

    def test_other_forms(self) -> None:
        self.assertEqual(parse_time("2026-11-30T08:14:14Z"), datetime(2026, 11, 30, 8, 14, 14, tzinfo=timezone.utc))
        self.assertEqual(parse_time("2026-11-30T10:14:14.5+02:00"),
                         datetime(2026, 11, 30, 8, 14, 14, 500000, tzinfo=timezone.utc))
        self.assertIs(parse_time("2026-11-30T10:14:14.5+02:00").tzinfo, timezone.utc)

    def test_not_a_time(self) -> None:
        for bad in ("2026-11-30 08:14:14Z", "2026-13-30T08:14:14Z", "2026-11-30T08:14:14.1234567890Z", ""):
            with self.assertRaises(ProtocolError, msg=bad):
                parse_time(bad)


if __name__ == "__main__":
    unittest.main()
