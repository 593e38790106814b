"""The scrub op, and ScrubWriter: a tool's output written through it
reaches its reader with the released values redacted, however it was cut."""

from __future__ import annotations

import io
import unittest

from arca_client import ScrubWriter

from .support import Home


class ScrubTest(unittest.TestCase):
    def test_scrub_and_the_writer(self) -> None:
        home = Home("")
        self.addCleanup(home.cleanup)
        c = home.start()
        self.addCleanup(c.close)
        secret = "tok-9f8e7d6c5b"
        c.put("arca://app/token", secret)
        c.put("arca://app/pin", "123")
        output = f"connecting… token={secret}\nretry with {secret} ✓ pin 123\n"
        self.assertEqual(c.scrub(output).text, output, "nothing released yet")
        c.get("arca://app/token")
        c.get("arca://app/pin")
        whole = c.scrub(output)
        self.assertNotIn(secret, whole.text)
        self.assertEqual(whole.text.count("<redacted:app/token>"), 2)
        self.assertEqual([(r.ref, r.count) for r in whole.redactions], [("arca://app/token", 2)])
        self.assertEqual(whole.unscrubbable, ("arca://app/pin",))
        data = output.encode()
        for size in (1, 3, 7, len(data)):
            out = io.StringIO()
            with ScrubWriter(c, out, f"tool-{size}") as w:
                for i in range(0, len(data), size):
                    self.assertEqual(w.write(data[i:i + size]), len(data[i:i + size]))
            self.assertEqual(out.getvalue(), whole.text, f"writes of {size} bytes")
            self.assertEqual(w.redactions, {"arca://app/token": 2})
            self.assertEqual(w.unscrubbable, ("arca://app/pin",))
            with self.assertRaises(ValueError):
                w.write("x")
