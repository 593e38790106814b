"""Pipelining: concurrent callers, futures, the window, timeouts that keep
their slot, serve gone with calls in flight."""

from __future__ import annotations

import os
import signal
import threading
import time
import unittest
from concurrent.futures import Future
from typing import List

from arca_client import ClosedError

from .support import SLOW_FOR_SLOW, Events, Home

# "Does not hang": bounds far above what any of these takes.
HANG = 30.0


class PipelineTest(unittest.TestCase):
    def home(self, toml: str = "") -> Home:
        h = Home(toml)
        self.addCleanup(h.cleanup)
        return h

    def test_1000_requests_from_20_threads(self) -> None:
        h = self.home()
        c = h.start(max_in_flight=32)  # smaller than the callers' demand: backpressure is exercised
        self.addCleanup(c.close)
        for i in range(10):
            c.put(f"arca://app/k{i}", f"v{i}")
        errors: List[str] = []

        def caller(g: int) -> None:
            for n in range(50):
                i = (g + n) % 10
                got = c.get(f"arca://app/k{i}", timeout=HANG)
                if got.value.reveal() != f"v{i}" or got.ref != f"arca://app/k{i}":
                    errors.append(f"k{i} got the response of {got.ref}")

        threads = [threading.Thread(target=caller, args=(g,)) for g in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(HANG)
        self.assertFalse(any(t.is_alive() for t in threads), "callers hang")
        self.assertEqual(errors, [])

    def test_futures_from_one_thread(self) -> None:
        c = self.home().start(max_in_flight=64)
        self.addCleanup(c.close)
        puts = [c.submit_put(f"arca://app/k{i}", f"v{i}") for i in range(100)]
        self.assertEqual([p.result(HANG).version for p in puts], [1] * 100)
        gets = [c.submit_get(f"arca://app/k{i % 100}") for i in range(500)]
        self.assertEqual([g.result(HANG).value.reveal() for g in gets], [f"v{i % 100}" for i in range(500)])
        self.assertEqual(len(c.submit_list().result(HANG).records), 100)

    def test_a_timed_out_call_keeps_its_slot(self) -> None:
        c = self.home(SLOW_FOR_SLOW).start()
        self.addCleanup(c.close)
        c.put("arca://app/a", "va", timeout=HANG)
        c.put("arca://app/b", "vb", timeout=HANG)
        began = time.monotonic()
        with self.assertRaises(TimeoutError):
            c.get("arca://app/a", actor="slow", timeout=0.1)
        # serve answers after 4 s: returning well before proves the call did
        # not wait for it.
        self.assertLess(time.monotonic() - began, 3.5, "the timed-out call waited for the answer")
        # The response to it comes first and is dropped; each later call
        # gets its own.
        later = [c.submit_get(f"arca://app/{x}") for x in "bab"]
        self.assertEqual([f.result(HANG).value.reveal() for f in later], ["vb", "va", "vb"])

    def test_a_cancelled_future_drops_its_response(self) -> None:
        c = self.home(SLOW_FOR_SLOW).start()
        self.addCleanup(c.close)
        c.put("arca://app/a", "va")
        c.put("arca://app/b", "vb")
        dropped = c.submit_get("arca://app/a", actor="slow")
        self.assertTrue(dropped.cancel())
        self.assertEqual(c.get("arca://app/b", timeout=HANG).value.reveal(), "vb")

    def test_the_window_bounds_what_is_in_flight(self) -> None:
        h = self.home(SLOW_FOR_SLOW)
        seen = Events()
        c = h.start(max_in_flight=1, on_event=seen)
        first = c.submit_list(actor="slow")
        # The window is full: this call waits for room, times out, and never
        # reaches the wire.
        with self.assertRaisesRegex(TimeoutError, "no room"):
            c.list(timeout=0.1)
        self.assertEqual(first.result(HANG).env, "default")
        self.assertEqual(c.list(timeout=HANG).env, "default")
        self.assertEqual(c.close(), 0)
        self.assertEqual(sorted(seen.by_id()), [1, 2, 3], "ids: the manifest, the first list, the last")

    def test_serve_killed_with_calls_in_flight(self) -> None:
        c = self.home(SLOW_FOR_SLOW).start()
        self.addCleanup(c.close)
        errors: List[BaseException] = []
        lock = threading.Lock()

        def caller() -> None:
            try:
                c.list(actor="slow")
            except BaseException as e:  # noqa: BLE001 - every outcome is looked at below
                with lock:
                    errors.append(e)

        threads = [threading.Thread(target=caller) for _ in range(10)]
        for t in threads:
            t.start()
        futs: List[Future] = [c.submit_check(actor="slow") for _ in range(5)]
        time.sleep(0.1)
        os.kill(c.pid, signal.SIGKILL)
        for t in threads:
            t.join(HANG)
        self.assertFalse(any(t.is_alive() for t in threads), "calls hang after serve was killed")
        self.assertEqual(len(errors), 10)
        for e in errors:
            self.assertIsInstance(e, ClosedError)
        for f in futs:
            self.assertIsInstance(f.exception(HANG), ClosedError)
        with self.assertRaises(ClosedError):
            c.get("arca://app/db", timeout=HANG)
        self.assertEqual(c.close(), -signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
