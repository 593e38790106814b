"""How long the client holds a value: a response nobody waits for is never
read into a Secret, and one handed over is not kept by the reader once the
caller lets go of it."""

from __future__ import annotations

import time
import unittest

from .support import GatedTestCase

HANG = 30.0


class LifetimeTest(GatedTestCase):
    def test_a_cancelled_future_is_dropped_unread(self) -> None:
        f = self.c.submit_get("arca://app/gated")
        self.assertTrue(f.cancel())
        self.after_the_gate()
        self.assertEqual(self.read, [], "the response of a cancelled future was read")

    def assertLetGo(self, what: str) -> None:
        # The reader lets go right after it settled the call, which may be
        # just after the caller woke: wait for it, within a bound.
        deadline = time.monotonic() + 10
        while self.secrets_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.secrets_alive(), 0, what)

    def test_the_reader_keeps_no_value(self) -> None:
        # No response follows these: what the reader still holds is kept
        # as long as the session is idle.
        f = self.c.submit_get("arca://app/db")
        self.assertEqual(f.result(HANG).value.reveal(), self.canary)
        del f
        self.assertLetGo("the value of a future dropped by its caller")
        self.assertEqual(self.c.get("arca://app/db", timeout=HANG).value.reveal(), self.canary)
        self.assertLetGo("the value of a blocking get dropped by its caller")


if __name__ == "__main__":
    unittest.main()
