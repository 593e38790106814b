"""What serve could not read is refused before it is sent: a str with no
UTF-8 form, a line over serve's cap. serve would answer such a line with
id null; refused here, it never reaches the wire, takes no place in the
window, and the session goes on."""

from __future__ import annotations

import unittest

from arca_client import ArcaError, Client, Secret

from .support import Events, Home
from .test_canary import CANARY, everything_about

HANG = 30.0
MAX = 4 << 20  # serve's cap on a request line, its newline not counted


class RefusedTest(unittest.TestCase):
    def start(self) -> "tuple[Client, Events]":
        home = Home()
        self.addCleanup(home.cleanup)
        seen = Events()
        # A window of one: a refused call that kept its place would leave
        # no room for the next, which would time out.
        c = home.start(max_in_flight=1, on_event=seen)
        self.addCleanup(c.close)
        return c, seen

    def assertRefused(self, field: str, call) -> ValueError:  # type: ignore[no-untyped-def]
        with self.assertRaises(ValueError) as cm:
            call()
        e = cm.exception
        self.assertIn(repr(field), str(e), "the error names the field")
        self.assertNotIn(CANARY, everything_about(e), "the error quotes the value")
        self.assertIsNone(e.__context__, "the codec's error, which holds the str, rides along")
        return e

    def test_a_str_with_no_utf8_form_in_any_field(self) -> None:
        c, seen = self.start()
        bad = CANARY + "\ud800"
        self.assertRefused("value", lambda: c.put("arca://app/db", bad, timeout=HANG))
        self.assertRefused("value", lambda: c.put("arca://app/db", Secret(bad), timeout=HANG))
        self.assertRefused("value", lambda: c.rotate("arca://app/db", bad, timeout=HANG))
        # A pair of surrogates as two code points has no UTF-8 form either:
        # sent as escapes it would be stored as another str than the one given.
        self.assertRefused("value", lambda: c.submit_put("arca://app/db", CANARY + "\ud83d\ude00"))
        self.assertRefused("ref", lambda: c.get("arca://app/" + bad, timeout=HANG))
        self.assertRefused("env", lambda: c.list(env=bad, timeout=HANG))
        self.assertRefused("actor", lambda: c.check(actor=bad, timeout=HANG))
        self.assertRefused("attestation", lambda: c.resolve({"DB": "arca://app/db"}, attestation=bad, timeout=HANG))
        self.assertRefused("op", lambda: c.call("get\udfff", ref="arca://app/db", timeout=HANG))

        # The next call works, and values beyond ASCII are sent as they are.
        self.assertEqual(c.put("arca://app/db", "caf\u00e9 \U0001f600", timeout=HANG).version, 1)
        self.assertEqual(c.get("arca://app/db", actor="\u00e9quipe", timeout=HANG).value.reveal(),
                         "caf\u00e9 \U0001f600")
        self.assertEqual(c.close(), 0)
        # Nothing refused reached serve: after the manifest of start, the
        # put and the get, with no bad_request between them.
        self.assertEqual(seen.by_id(), {1: ["manifest/ok"], 2: ["put/ok"], 3: ["get/ok"]})

    def test_a_line_over_the_cap(self) -> None:
        c, seen = self.start()
        for _ in range(8):
            c.list(timeout=HANG)  # requests 2 to 9: the next id has two digits

        def line(n: int) -> int:
            return len('{"id":10,"op":"put","ref":"arca://app/db","value":""}') + n

        at_cap = MAX - line(0)
        self.assertEqual(line(at_cap), MAX)
        # One byte over with id 10, at the cap with a one-digit id: only the
        # id's own digits make it too long.
        self.assertRefused("value", lambda: c.put("arca://app/db", "x" * (at_cap + 1), timeout=HANG))
        self.assertRefused("value", lambda: c.submit_rotate("arca://app/db", "x" * (2 * MAX)))
        # At the cap, serve reads the line: it refuses the value's size, and
        # echoes the id.
        with self.assertRaises(ArcaError) as cm:
            c.put("arca://app/db", "x" * at_cap, timeout=HANG)
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertIn('"value" is larger than', cm.exception.message)
        self.assertEqual(c.list(timeout=HANG).records, ())
        self.assertEqual(c.close(), 0)
        ids = seen.by_id()
        self.assertEqual(sorted(ids), list(range(1, 12)))
        self.assertEqual(ids[10], ["error/bad_request"], "the line at the cap was read as request 10")


if __name__ == "__main__":
    unittest.main()
