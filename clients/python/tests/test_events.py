"""The audit wire as typed events, checked for seq and chain, paired with
the responses by id."""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import socket
import tempfile
import unittest
from datetime import timezone
from typing import Optional

from arca_client import ArcaError, Client, Event, StreamError

from .support import Events, Home, fake_binary

ALLOW = '[serve.pdp]\nexec = "echo \'{\\"allow\\": true, \\"reason\\": \\"fine\\"}\'"\n'


class EventsTest(unittest.TestCase):
    def test_events_pair_with_responses(self) -> None:
        home = Home()
        self.addCleanup(home.cleanup)
        seen = Events()
        c = home.start(on_event=seen)
        c.put("arca://app/db", "v1", actor="agent:ev")  # id 2 (1 was the manifest of start)
        os.makedirs(os.path.join(home.vault_tmp(), "x"))
        with self.assertRaises(ArcaError) as cm:
            c.put("arca://app/db", "v2")  # id 3: audited, then its commit fails
        self.assertEqual(cm.exception.code, "op_error")
        shutil.rmtree(home.vault_tmp())
        c.get("arca://app/db")  # id 4
        with self.assertRaises(ArcaError):
            c.get("arca://app/missing")  # id 5
        self.assertEqual(c.close(), 0)

        self.assertEqual(seen.errors, [], "the stream broke")
        self.assertEqual(seen.by_id(), {1: ["manifest/ok"], 2: ["put/ok"], 3: ["put/ok", "error/error"],
                                        4: ["get/ok"], 5: ["error/not_found"]})
        ev = seen.events
        self.assertEqual((ev[0].event, ev[-1].event, ev[-1].message), ("start", "stop", "eof"))
        # start names the process serving; a request's event its actor.
        self.assertEqual((ev[0].user, ev[0].host), (pwd.getpwuid(os.getuid()).pw_name, socket.gethostname()))
        self.assertEqual({(e.user, e.host) for e in ev[1:]}, {("", "")})
        self.assertEqual([e.seq for e in ev], list(range(1, len(ev) + 1)))
        # The chain, computed here from the lines the client handed on.
        self.assertEqual(ev[0].prev, "")
        for before, e in zip(ev, ev[1:]):
            self.assertEqual(e.prev, hashlib.sha256(before.line).hexdigest())
        put = next(e for e in ev if e.id == 2)
        self.assertEqual((put.op, put.actor, put.env, put.ref, put.version), ("put", "agent:ev", "default", "app/db", 1))
        self.assertEqual(put.ts.tzinfo, timezone.utc)
        missing = next(e for e in ev if e.id == 5)
        self.assertEqual((missing.code, missing.outcome), ("not_found", "not_found"))

    def test_events_carry_the_policy(self) -> None:
        home = Home(ALLOW)
        self.addCleanup(home.cleanup)
        seen = Events()
        with home.start(on_event=seen) as c:
            c.list()
        listed = next(e for e in seen.events if e.id == 2)
        self.assertEqual(listed.policy.reason if listed.policy else None, "fine")

    def test_a_broken_stream_is_reported(self) -> None:
        seen = Events()
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        with Client.start(fake_binary(d, "broken-chain"), on_event=seen) as c:
            c.get("arca://app/db")
        problems = [str(err) for _, err in seen.errors]
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("gap", problems[0])
        self.assertIn("chain is broken", problems[1])
        self.assertTrue(all(isinstance(err, StreamError) for _, err in seen.errors))
        self.assertEqual(seen.events[-1].event, "stop")

    def test_prev_is_required_once_promised(self) -> None:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        # A server from before the chain: no prev, no capability; unknown is
        # not false, and nothing is reported.
        old = Events()
        with Client.start(fake_binary(d, "no-chain"), on_event=old) as c:
            c.get("arca://app/db")
        self.assertEqual(old.errors, [])
        self.assertEqual([e.prev for e in old.events], [""] * 4)
        # A server that lists audit_chain and then leaves prev out.
        broken = Events()
        with Client.start(fake_binary(d, "unlinked"), on_event=broken) as c:
            c.get("arca://app/db")
        self.assertEqual([e.event for e, _ in broken.errors if e], ["get", "stop"])
        # A stream that carried prev and then leaves it out, with no
        # capability listed: the chain it began is broken.
        dropped = Events()
        with Client.start(fake_binary(d, "drop-chain"), on_event=dropped) as c:
            c.get("arca://app/db")
        self.assertEqual([e.event for e, _ in dropped.errors if e], ["get"])

    def test_a_callback_that_raises_does_not_stop_the_stream(self) -> None:
        home = Home()
        self.addCleanup(home.cleanup)
        calls = []

        def bad(e: Optional[Event], err: Optional[Exception]) -> None:
            calls.append(e)
            raise RuntimeError("an embedder's bug")

        with home.start(on_event=bad) as c:
            for i in range(50):
                c.put(f"arca://app/k{i}", "v")
            self.assertEqual(len(c.list().records), 50)
        self.assertEqual(len(calls), 1 + 1 + 50 + 1 + 1, "start, manifest, the puts, list, stop")


if __name__ == "__main__":
    unittest.main()
