"""What a real serve never writes, from tests/fake_serve.py: lines over the
caps, responses out of step, fields from a later server."""

from __future__ import annotations

import shutil
import tempfile
import unittest

from arca_client import MAX_EVENT_LINE, MAX_RESPONSE_LINE, ArcaError, Client, ClosedError, ProtocolError, StreamError

from .support import Events, fake_binary

HANG = 30.0


class WireTest(unittest.TestCase):
    def fake(self, mode: str, **kw: object) -> Client:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        c = Client.start(fake_binary(d, mode), **kw)  # type: ignore[arg-type]
        self.addCleanup(c.close)
        return c

    def assertClosed(self, c: Client, why: str) -> None:
        with self.assertRaises(ClosedError) as cm:
            c.get("arca://app/db", timeout=HANG)
        self.assertIn(why, str(cm.exception))
        with self.assertRaises(ClosedError, msg="the client stays failed"):
            c.get("arca://app/db", timeout=HANG)

    def test_a_response_line_over_the_cap(self) -> None:
        c = self.fake("long-response")
        self.assertClosed(c, f"longer than {MAX_RESPONSE_LINE} bytes")
        self.assertLess(c.close(), 0, "serve is killed: its wire cannot be trusted")

    def test_an_event_line_over_the_cap(self) -> None:
        seen = Events()
        c = self.fake("long-event", on_event=seen)
        self.assertClosed(c, "the audit wire broke")
        self.assertTrue(any(isinstance(err, StreamError) and f"longer than {MAX_EVENT_LINE}" in str(err)
                            for _, err in seen.errors))

    def test_a_response_with_another_id(self) -> None:
        self.assertClosed(self.fake("wrong-id"), "carries another id")

    def test_a_response_with_no_request(self) -> None:
        c = self.fake("stray")
        self.assertEqual(c.get("arca://app/db", timeout=HANG).version, 1)
        with self.assertRaises(ClosedError) as cm:
            c.get("arca://app/db", timeout=HANG)
        self.assertIn("out of step", str(cm.exception))

    def test_a_response_that_is_not_json(self) -> None:
        self.assertClosed(self.fake("not-json"), "not a JSON object")

    def test_a_null_id_error_answers_its_call(self) -> None:
        # serve answers a line it could not read with id null: by position,
        # the answer of the call at the head of the queue, and the wire
        # stays in step.
        c = self.fake("null-id")
        futs = [c.submit_get(ref) for ref in ("arca://app/unreadable", "arca://app/db", "arca://app/unreadable")]
        for f in (futs[0], futs[2]):
            e = f.exception(HANG)
            self.assertIsInstance(e, ArcaError)
            assert isinstance(e, ArcaError)
            self.assertEqual((e.code, e.message), ("bad_request", "request is not valid JSON (at byte 59)"))
        self.assertEqual(futs[1].result(HANG).value.reveal(), "fake-value")
        with self.assertRaises(ArcaError):
            c.get("arca://app/unreadable", timeout=HANG)
        self.assertEqual(c.get("arca://app/db", timeout=HANG).version, 1)
        self.assertEqual(c.close(), 0, "serve was not killed")

    def test_a_null_id_success_is_out_of_step(self) -> None:
        # Only a failure is serve's answer to a line it could not read.
        c = self.fake("null-id")
        with self.assertRaises(ClosedError) as cm:
            c.get("arca://app/null-ok", timeout=HANG)
        self.assertIn("out of step", str(cm.exception))

    def test_a_malformed_result_fails_its_call_only(self) -> None:
        c = self.fake("malformed")
        for _ in range(2):
            with self.assertRaisesRegex(ProtocolError, "'version'"):
                c.get("arca://app/db", timeout=HANG)

    def test_unknown_fields_are_ignored(self) -> None:
        seen = Events()
        c = self.fake("extra", on_event=seen)
        m = c.manifest()
        self.assertEqual(m.capabilities, {"batch": True}, "capabilities as the server sent them")
        self.assertIs(m.capability("batch"), True)
        self.assertIsNone(m.capability("streaming"), "an absent capability is unknown")
        g = c.get("arca://app/db")
        self.assertEqual((g.ref, g.version, g.value.reveal()), ("arca://app/db", 1, "fake-value"))
        with self.assertRaises(ArcaError) as cm:
            c.rm("arca://app/db")
        self.assertEqual(cm.exception.code, "a_future_code", "a code this client does not know is passed on")
        self.assertEqual(c.close(), 0)
        self.assertEqual(seen.errors, [])
        self.assertEqual([e.event for e in seen.events], ["start", "manifest", "manifest", "get", "rm", "stop"])


if __name__ == "__main__":
    unittest.main()
