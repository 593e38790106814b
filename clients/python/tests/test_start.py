"""Spawning serve: readiness, a serve that cannot start, the protocol
check, the explicit environment, close."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import unittest

from arca_client import PROTOCOL, ArcaError, Client, ClosedError, ProtocolError, StartError

from .support import TWO_ENVS, Events, Home, arca_bin, fake_binary


class StartTest(unittest.TestCase):
    def setUp(self) -> None:
        self.home = Home()
        self.addCleanup(self.home.cleanup)
        self.tmp = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_ready_after_the_start_event(self) -> None:
        seen = Events()
        with self.home.start(on_event=seen) as c:
            self.assertGreater(c.pid, 0)
            # start returned: on_event saw the start event.
            self.assertEqual(seen.events[0].event, "start")
            self.assertIn(PROTOCOL, seen.events[0].message)
            self.assertEqual(c.manifest().protocol, PROTOCOL)
        # Closed: the stream was read to its end. The manifest of start was
        # request 1.
        self.assertEqual(seen.by_id(), {1: ["manifest/ok"], 2: ["manifest/ok"]})
        self.assertEqual(seen.events[-1].event, "stop")

    def test_a_config_that_cannot_start(self) -> None:
        missing = os.path.join(self.home.dir, "missing.toml")
        with self.assertRaises(StartError) as cm:
            self.home.start(config=missing)
        msg = cm.exception.stop_message or ""
        self.assertIn("cannot start: config", msg)
        self.assertIn("does not exist", msg)
        self.assertIn(msg, str(cm.exception))

    def test_a_binary_that_is_not_there(self) -> None:
        with self.assertRaisesRegex(StartError, "not found on PATH"):
            Client.start("no-such-arca-binary", environ=self.home.environ)
        with self.assertRaisesRegex(StartError, "start "):
            Client.start(os.path.join(self.tmp, "no-such-arca"), environ=self.home.environ)
        with self.assertRaisesRegex(StartError, "no-such-dir"):
            Client.start(arca_bin(), cwd=os.path.join(self.tmp, "no-such-dir"))
        with self.assertRaises(ValueError):
            Client.start(arca_bin(), max_in_flight=0)

    def test_stderr_closing_before_start(self) -> None:
        with self.assertRaisesRegex(StartError, r"ended before its start event .*\(exit status 0\)"):
            Client.start(fake_binary(self.tmp, "no-start"))

    def test_a_line_that_is_not_the_start_event(self) -> None:
        with self.assertRaisesRegex(StartError, "before its start event") as cm:
            Client.start(fake_binary(self.tmp, "junk"))
        self.assertIsNone(cm.exception.stop_message)

    def test_start_timeout_kills_serve(self) -> None:
        pidfile = os.path.join(self.tmp, "pid")
        began = time.monotonic()
        with self.assertRaisesRegex(StartError, "not ready after"):
            Client.start(fake_binary(self.tmp, "silent"), environ={"FAKE_PIDFILE": pidfile}, start_timeout=0.5)
        self.assertLess(time.monotonic() - began, 20, "start hung past its timeout")
        with open(pidfile) as f:
            pid = int(f.read())
        with self.assertRaises(ProcessLookupError, msg="serve was left running"):
            os.kill(pid, 0)

    def test_another_protocol_is_refused(self) -> None:
        with self.assertRaisesRegex(ProtocolError, "arca-serve/2"):
            Client.start(fake_binary(self.tmp, "protocol2"))

    def test_the_environment_is_the_one_given(self) -> None:
        # The parent's HOME holds no vault of this test; serve sees only
        # environ, so without HOME it has none at all.
        with Client.start(arca_bin(), config=self.home.config, environ={}, cwd=self.home.dir) as c:
            with self.assertRaises(ArcaError) as cm:
                c.list()
            self.assertEqual(cm.exception.code, "op_error")
            self.assertIn("HOME", cm.exception.message)
        with self.home.start() as c:
            self.assertEqual(c.list().records, ())

    def test_close_ends_the_session(self) -> None:
        c = self.home.start()
        self.assertEqual(c.close(), 0)
        self.assertEqual(c.close(), 0, "a second close")
        with self.assertRaises(ClosedError):
            c.list()
        with self.assertRaises(ClosedError):
            c.submit_get("arca://app/db")

    def test_env_flag(self) -> None:
        home = Home(TWO_ENVS)
        self.addCleanup(home.cleanup)
        with home.start(env="ci") as c:
            k = c.check()
            self.assertEqual((k.env, k.healthy), ("ci", False))  # ci's vault was never created
            self.assertEqual(c.check(env="default").env, "default")
        with self.assertRaises(StartError) as cm:
            home.start(env="prod")
        self.assertIn('unknown env "prod"', cm.exception.stop_message or "")

if __name__ == "__main__":
    unittest.main()
