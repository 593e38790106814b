"""The pipes are buffered, and lines that gather go out in one write.

The writes are counted where they reach serve's stdin: the raw pipe under
the buffered writer, one count per write(2).
"""

from __future__ import annotations

import io
import subprocess
import unittest
from typing import Any
from unittest import mock

from .support import Home


class CountingRaw(io.RawIOBase):
    """serve's stdin pipe, counting the writes made to it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.writes = 0

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.writes += 1
        return self.raw.write(b)

    def fileno(self) -> int:
        return self.raw.fileno()

    def close(self) -> None:
        self.raw.close()
        super().close()


class CountingPopen(subprocess.Popen):  # type: ignore[type-arg]
    last: "CountingPopen"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        assert isinstance(self.stdin, io.BufferedWriter), "serve's stdin is not buffered"
        assert isinstance(self.stdout, io.BufferedReader), "serve's stdout is not buffered"
        assert isinstance(self.stderr, io.BufferedReader), "serve's stderr is not buffered"
        # The same buffer over a counting pipe; detach, so the writer
        # replaced does not close the pipe when it goes.
        self.counter = CountingRaw(self.stdin.detach())
        self.stdin = io.BufferedWriter(self.counter, buffer_size=64 << 10)
        CountingPopen.last = self


class BufferingTest(unittest.TestCase):
    def test_1000_requests_submitted_at_once_share_writes(self) -> None:
        home = Home()
        self.addCleanup(home.cleanup)
        with mock.patch.object(subprocess, "Popen", CountingPopen):
            c = home.start(max_in_flight=1000)
        self.addCleanup(c.close)
        c.put("arca://app/db", "v")
        counter = CountingPopen.last.counter
        before = counter.writes
        futs = [c.submit_get("arca://app/db") for _ in range(1000)]
        self.assertEqual({f.result(30).value.reveal() for f in futs}, {"v"})
        writes = counter.writes - before
        self.assertGreater(writes, 0)
        self.assertLess(writes, 100, f"1,000 requests took {writes} writes")


if __name__ == "__main__":
    unittest.main()
