"""The uses (http, exec, proxy) against a stand-in for serve: the lines the
client writes for them, as the request schema shapes their fields, the
results it gives back, and upstream_failed's cause (test_use_serve.py has
them against a real serve)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest

from arca_client import ArcaError, Client, ExecTruncated, HttpRedaction

from .support import fake_binary

HANG = 30.0


class UseTest(unittest.TestCase):
    def setUp(self) -> None:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        self.log = os.path.join(d, "lines")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FAKE_LOG": self.log}
        self.c = Client.start(fake_binary(d, "uses"), environ=env)
        self.addCleanup(self.c.close)

    def lines(self) -> list:
        if not os.path.exists(self.log):
            return []
        with open(self.log, "rb") as f:
            return [json.loads(x) for x in f.read().splitlines()]

    def test_lines_results_and_cause(self) -> None:
        c = self.c
        h = c.http("echo", "POST", "/a", query={"q": ["1", "2"], "r": "x"}, headers={"X-Test": "y"}, body="é",
                   timeout=HANG)
        self.assertEqual((h.service, h.status, h.body, h.truncated, h.elapsed_ms), ("echo", 503, "down", False, 7))
        self.assertEqual(h.header("Content-Type"), ["text/plain"])
        self.assertEqual(h.redactions, (HttpRedaction("arca://app/token", 1),))
        self.assertTrue(h.policy is not None and h.policy.allow)
        x = c.exec("hello", args=("--dry-run",), timeout=HANG)
        self.assertEqual((x.action, x.exit_code, x.stdout, x.truncated), ("hello", 0, "hi", ExecTruncated(False, True)))
        p = c.proxy(services=["echo"], timeout=HANG)
        self.assertEqual((p.base_urls, p.token), ({"echo": "http://127.0.0.1:4000/echo"}, "t0k"))
        self.assertTrue(c.proxy(stop=True, timeout=HANG).stopped)
        c.submit_exec("hello", args=[]).result(HANG)
        for call in (lambda: c.http("down", "GET", "/", timeout=HANG), lambda: c.exec("down", timeout=HANG)):
            with self.assertRaises(ArcaError) as cm:
                call()
            self.assertEqual((cm.exception.code, cm.exception.cause), ("upstream_failed", "connect"))
            self.assertIn("cause='connect'", repr(cm.exception))
        self.assertEqual(self.lines(), [
            {"id": 2, "op": "http", "service": "echo", "method": "POST", "path": "/a",
             "query": {"q": ["1", "2"], "r": "x"}, "headers": {"X-Test": "y"}, "body": "é"},
            {"id": 3, "op": "exec", "action": "hello", "args": ["--dry-run"]},
            {"id": 4, "op": "proxy", "services": ["echo"]},
            {"id": 5, "op": "proxy", "stop": True},
            {"id": 6, "op": "exec", "action": "hello", "args": []},
            {"id": 7, "op": "http", "service": "down", "method": "GET", "path": "/"},
            {"id": 8, "op": "exec", "action": "down"},
        ])

    def test_a_field_of_the_wrong_shape_is_refused_before_it_is_sent(self) -> None:
        c = self.c
        for call in (
            lambda: c.exec("hello", args="--dry-run"),  # type: ignore[arg-type]
            lambda: c.exec("hello", args=["ok", 7]),  # type: ignore[list-item]
            lambda: c.http("echo", "GET", "/", headers={"X-Secret-Name": ["a"]}),  # type: ignore[dict-item]
            lambda: c.http("echo", "GET", "/", query={"q": [1]}),  # type: ignore[list-item]
            lambda: c.http("echo", "GET", "/", query=["q"]),  # type: ignore[arg-type]
            lambda: c.proxy(services=[None]),  # type: ignore[list-item]
        ):
            with self.assertRaises(TypeError) as cm:
                call()
            self.assertNotIn("X-Secret-Name", str(cm.exception))
        with self.assertRaises(ValueError):
            c.http("echo", "GET", "/", headers={"X-Test": "\ud800"})
        c.exec("hello", timeout=HANG)
        self.assertEqual(self.lines(), [{"id": 2, "op": "exec", "action": "hello"}])


if __name__ == "__main__":
    unittest.main()
