"""resolve after a failure: the gets still on the wire are abandoned (their
responses dropped unread) and nothing it gathered is kept, not even where
the exception's traceback reaches. The fake holds the get of
arca://app/gated back until the test opens the gate, so its response comes
after resolve has failed."""

from __future__ import annotations

import unittest
from typing import Optional

from arca_client import ArcaError, Client, ClosedError

from .support import GatedTestCase, Home

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


DENY = '[serve.pdp]\nexec = "echo \'{\\"allow\\": false, \\"reason\\": \\"not on shift\\"}\'"\n'


class NamedFailureTest(unittest.TestCase):
    """Against arca serve itself: a failed resolve names the variable and
    the ref whose get failed, as the Go client's does, and keeps the code
    and the verdict."""

    def start(self, toml: str = "") -> Client:
        home = Home(toml)
        self.addCleanup(home.cleanup)
        home.arca("--config", home.config, "put", "arca://app/db", stdin="v4lue")
        c = home.start()
        self.addCleanup(c.close)
        return c

    def test_the_error_names_the_variable_and_the_ref(self) -> None:
        c = self.start()
        with self.assertRaises(ArcaError) as cm:
            c.resolve({"A": "arca://app/db", "B": "arca://app/missing"}, timeout=HANG)
        e = cm.exception
        self.assertEqual(e.code, "not_found")
        self.assertEqual((e.variable, e.ref), ("B", "arca://app/missing"))
        self.assertEqual(e.message, 'arca://app/missing not found in env "default"')
        self.assertEqual(str(e), 'B (arca://app/missing): arca serve: not_found: arca://app/missing not found in env "default"')
        self.assertIsInstance(e.__cause__, ArcaError)

        with self.assertRaises(ArcaError) as cm:
            c.resolve({"DB_PASSWORD": "arca://app/db", "TOKEN": "not a ref"}, timeout=HANG)
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertTrue(str(cm.exception).startswith("TOKEN (not a ref): arca serve: bad_request: invalid ref"), str(cm.exception))

        c.close()
        with self.assertRaises(ClosedError) as closed:
            c.resolve({"A": "arca://app/db"}, timeout=HANG)
        self.assertEqual((closed.exception.variable, closed.exception.ref), ("A", "arca://app/db"))
        self.assertTrue(str(closed.exception).startswith("A (arca://app/db): "), str(closed.exception))

    def test_a_ref_refused_before_it_is_sent_names_the_variable(self) -> None:
        c = self.start()
        with self.assertRaises(TypeError) as cm:
            c.resolve({"A": "arca://app/db", "B": 42}, timeout=HANG)  # type: ignore[dict-item]
        self.assertTrue(str(cm.exception).startswith("B (int): "), str(cm.exception))
        self.assertIn("'ref'", str(cm.exception))
        with self.assertRaises(ValueError) as bad:
            c.resolve({"A": "arca://app/db", "C": "arca://app/\ud800"}, timeout=HANG)
        self.assertTrue(str(bad.exception).startswith("C (arca://app/\\ud800): "), str(bad.exception))
        self.assertIsNone(bad.exception.__context__, "the codec's error rides along")
        # The session goes on.
        self.assertEqual(c.resolve({"A": "arca://app/db"}, timeout=HANG)["A"].reveal(), "v4lue")

    def test_a_denied_resolve_keeps_the_verdict(self) -> None:
        c = self.start(DENY)
        with self.assertRaises(ArcaError) as cm:
            c.resolve({"API_KEY": "arca://app/api"}, timeout=HANG)
        e = cm.exception
        self.assertEqual(e.code, "denied")
        self.assertTrue(str(e).startswith("API_KEY (arca://app/api): arca serve: denied: "), str(e))
        assert e.policy is not None
        self.assertEqual((e.policy.allow, e.policy.reason), (False, "not on shift"))


if __name__ == "__main__":
    unittest.main()
