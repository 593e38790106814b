"""A canary value, through every op and every failure: never in an
exception, a repr, an event or a log line; only reveal() gives it."""

from __future__ import annotations

import logging
import shutil
import tempfile
import traceback
import unittest
from typing import List, Optional

from arca_client import ArcaError, Client, ClientError, Secret

from .support import Events, Home, fake_binary

CANARY = "canary-5d1e0b-never-printed"
CANARY2 = "canary-2-9ab77c-never-printed"


def everything_about(e: BaseException) -> str:
    """The traceback as printed, and every exception in its chain with its
    args and attributes."""
    parts: List[str] = ["".join(traceback.format_exception(type(e), e, e.__traceback__))]
    seen: Optional[BaseException] = e
    while seen is not None:
        parts += [repr(seen), str(seen), repr(seen.args), repr(vars(seen))]
        seen = seen.__context__ or seen.__cause__
    return "\n".join(parts)


class CanaryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.log: List[str] = []
        handler = logging.Handler()
        handler.emit = lambda r: self.log.append(r.getMessage())  # type: ignore[method-assign]
        logging.getLogger().addHandler(handler)
        self.addCleanup(logging.getLogger().removeHandler, handler)

    def clean(self, what: str, text: str) -> None:
        self.assertNotIn(CANARY, text, what)
        self.assertNotIn(CANARY2, text, what)

    def test_the_real_serve(self) -> None:
        home = Home()
        self.addCleanup(home.cleanup)
        seen = Events()
        c = home.start(on_event=seen)
        self.addCleanup(c.close)
        results = [c.put("arca://app/db", Secret(CANARY)), c.get("arca://app/db"),
                   c.rotate("arca://app/db", CANARY2), c.get("arca://app/db"), c.list(), c.check(),
                   c.resolve({"DB": "arca://app/db"}), c.call("get", ref="arca://app/db"),
                   c.submit_get("arca://app/db").result(30), c.get("arca://app/db", version=1)]
        cursor = c.changes().cursor
        results += [c.history("arca://app/db"), c.rollback("arca://app/db", 1), c.rm("arca://app/db"),
                    c.list(deleted=True), c.undelete("arca://app/db"), c.changes(since=cursor),
                    c.destroy("arca://app/db", versions=[2])]
        self.assertEqual(results[1].value.reveal(), CANARY)
        self.assertEqual(results[3].value.reveal(), CANARY2)
        self.assertEqual(results[9].value.reveal(), CANARY)
        for r in results:
            logging.getLogger("embedder").warning("result %s %r", r, r)
            self.clean("a result's repr", repr(r) + str(r) + f"{r}")
        self.assertEqual(len(self.log), len(results))
        self.clean("a log line", "\n".join(self.log))

        failures: List[BaseException] = []
        for call in (lambda: c.put("arca://app/db", CANARY, if_version=1),  # a conflict
                     lambda: c.rollback("arca://app/db", 2),  # destroyed
                     lambda: c.put("arca://bad ref", CANARY), lambda: c.put("arca://app/db", CANARY, env="nope"),
                     lambda: c.put("arca://app/db", CANARY, actor="agent:\x07"),
                     lambda: c.rotate("arca://app/missing", Secret(CANARY)),
                     lambda: c.call("export", value=CANARY)):
            with self.assertRaises(ArcaError) as cm:
                call()
            failures.append(cm.exception)
        for e in failures:
            self.clean("an error", everything_about(e))
        c.close()
        self.assertEqual(seen.errors, [])
        for e in seen.events:
            self.clean("an event", repr(e) + e.line.decode())

    def test_what_a_broken_serve_writes(self) -> None:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        for mode in ("malformed", "not-json", "wrong-id"):
            c = Client.start(fake_binary(d, mode), environ={"FAKE_VALUE": CANARY})
            self.addCleanup(c.close)
            fut = c.submit_get("arca://app/db")
            e = fut.exception(30)
            self.assertIsInstance(e, ClientError, mode)
            assert e is not None
            self.clean(f"the error from {mode}", everything_about(e))
            with self.assertRaises(ClientError) as cm:
                c.get("arca://app/db", timeout=30)
            self.clean(f"the error from {mode}", everything_about(cm.exception))


if __name__ == "__main__":
    unittest.main()
