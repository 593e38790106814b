"""resolve after a failure: the gets still on the wire are abandoned (their
responses dropped unread) and nothing it gathered is kept, not even where
the exception's traceback reaches. tests/fake_serve.py in its gated mode
holds the get of arca://app/gated back until the test opens the gate, so
its response comes after resolve has failed."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import unittest
from typing import Any, List, Mapping, Optional
from unittest import mock

from arca_client import ArcaError, Client, Secret
from arca_client import results as r

from .support import fake_binary
from .test_canary import CANARY

HANG = 30.0


class ResolveTest(unittest.TestCase):
    def setUp(self) -> None:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        self.gate = os.path.join(d, "gate")
        self.addCleanup(self.open_gate)  # a failing test still lets the fake end
        self.c = Client.start(fake_binary(d, "gated"), environ={"FAKE_VALUE": CANARY, "FAKE_GATE": self.gate})
        self.addCleanup(self.c.close)
        # Which get results are read (their refs only: the recorder keeps
        # no value).
        self.read: List[str] = []
        real = r.read_get

        def recording(res: Mapping[str, Any], policy: Optional[r.Policy]) -> r.Got:
            self.read.append(res["ref"])
            return real(res, policy)

        patch = mock.patch.object(r, "read_get", recording)
        patch.start()
        self.addCleanup(patch.stop)

    def open_gate(self) -> None:
        with open(self.gate, "w"):
            pass

    def after_the_gate(self) -> None:
        """Open the gate and wait until serve answered all before it."""
        self.open_gate()
        self.assertEqual(self.c.manifest(timeout=HANG).protocol, "arca-serve/1")

    def secrets_alive(self) -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is Secret and o.reveal() == CANARY)

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
        self.assertEqual(self.c.resolve({"A": "arca://app/db"}, timeout=HANG)["A"].reveal(), CANARY)

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
