"""resolve after a failure: the gets still on the wire are abandoned (their
responses dropped unread) and nothing it gathered is kept, not even where
the exception's traceback reaches. The fake holds the get of
arca://app/gated back until the test opens the gate, so its response comes
after resolve has failed."""

from __future__ import annotations

import unittest
from typing import Optional

from arca_client import ArcaError

from .support import GatedTestCase

HANG = 30.0


class ResolveTest(GatedTestCase):
    def test_a_failed_get_abandons_the_rest(self) -> None:
        caught: Optional[BaseException] = None
        try:
            self.c.resolve({"A": "arca://app/db", "B": "arca://app/missing", "C": "arca://app/gated"}, timeout=HANG)
        except ArcaError as e:
            caught = e  # kept, traceback and all, as a caller's log might
        assert caught is not None
        self.assertEqual(caught.code, "not_found")  # type: ignore[attr-defined]
        self.after_the_gate()
        self.assertEqual(self.read, ["arca://app/db"], "a get after the failure was read")
        self.assertEqual(self.secrets_alive(), 0, "a value gathered before the failure is kept")
        self.assertIsNotNone(caught.__traceback__)
        # The session goes on.
        self.assertEqual(self.c.resolve({"A": "arca://app/db"}, timeout=HANG)["A"].reveal(), self.canary)

    def test_a_refused_ref_abandons_those_sent(self) -> None:
        with self.assertRaises(ValueError):
            self.c.resolve({"A": "arca://app/gated", "B": "arca://app/\ud800"}, timeout=HANG)
        self.after_the_gate()
        self.assertEqual(self.read, [], "a get sent before the refusal was read")

    def test_a_timeout_abandons_every_get(self) -> None:
        with self.assertRaises(TimeoutError):
            self.c.resolve({"A": "arca://app/gated", "B": "arca://app/db"}, timeout=0.2)
        self.after_the_gate()
        self.assertEqual(self.read, [], "a get behind the one that timed out was read")


if __name__ == "__main__":
    unittest.main()
