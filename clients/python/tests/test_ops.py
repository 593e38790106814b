"""Every op, typed, and every error code with its policy verdict."""

from __future__ import annotations

import os
import shutil
import unittest
from datetime import datetime, timezone

from arca_client import ArcaError, ClosedError, Got, Policy, Secret

from .support import TWO_ENVS, Home

DENY = '[serve.pdp]\nexec = "echo \'{\\"allow\\": false, \\"reason\\": \\"not on fridays\\"}\'"\n'
FAIL = '[serve.pdp]\nexec = "exit 3"\n'
DEGRADED = FAIL + "allow_on_error = true\n"
ALLOW = '[serve.pdp]\nexec = "echo \'{\\"allow\\": true, \\"reason\\": \\"ok by me\\", \\"obligations\\": [\\"log\\"]}\'"\n'


class OpsTest(unittest.TestCase):
    def start(self, toml: str = ""):  # type: ignore[no-untyped-def]
        home = Home(toml)
        self.addCleanup(home.cleanup)
        c = home.start()
        self.addCleanup(c.close)
        return home, c

    def assertCode(self, code: str, fn, *args, **kw) -> ArcaError:  # type: ignore[no-untyped-def]
        with self.assertRaises(ArcaError) as cm:
            fn(*args, **kw)
        self.assertEqual(cm.exception.code, code, cm.exception)
        return cm.exception

    def test_every_op(self) -> None:
        _, c = self.start()
        p = c.put("arca://app/db", "s3cret", actor="agent:test")
        self.assertEqual((p.ref, p.env, p.version, p.created), ("arca://app/db", "default", 1, True))
        self.assertEqual(p.created_at.tzinfo, timezone.utc)
        self.assertIsNone(p.policy)
        self.assertFalse(c.put("arca://app/db", Secret("s3cret-2")).created)

        g = c.get("arca://app/db")
        self.assertIsInstance(g, Got)
        self.assertEqual((g.value.reveal(), g.version, g.env), ("s3cret-2", 2, "default"))
        self.assertEqual(str(g.value), "<redacted>")
        self.assertIsNone(g.rotated_at, "rotated_at before any rotate")
        self.assertLessEqual(g.created_at, g.updated_at)
        self.assertLess(abs((datetime.now(timezone.utc) - g.updated_at).total_seconds()), 3600)

        r = c.rotate("arca://app/db", "n3w")
        self.assertEqual(r.version, 3)
        self.assertIsNotNone(r.rotated_at)
        self.assertEqual(c.get("arca://app/db").rotated_at, r.rotated_at)

        c.put("arca://app/api", "k")
        listed = c.list()
        self.assertEqual([x.ref for x in listed.records], ["arca://app/api", "arca://app/db"])
        self.assertEqual((listed.env, listed.truncated, listed.omitted), ("default", False, 0))
        self.assertIsNone(listed.records[0].rotated_at)
        self.assertEqual(listed.records[1].rotated_at, r.rotated_at)

        k = c.check()
        self.assertEqual((k.healthy, k.kind, k.records, k.problems, k.info), (True, "file", 2, (), ()))

        m = c.manifest()
        self.assertEqual(m.protocol, "arca-serve/1")
        self.assertEqual([o.name for o in m.ops], ["get", "put", "rm", "rotate", "list", "check", "manifest", "shutdown",
                                                   "scrub", "http", "exec", "proxy", "revoke", "approve", "approval",
                                                   "history", "rollback", "undelete", "destroy", "changes"])
        self.assertIn("upstream_failed", m.error_codes)
        self.assertEqual(m.limits["line_bytes"], 4 << 20)
        self.assertIn("not_found", m.error_codes)
        self.assertEqual((m.envs, m.default_env, m.pdp_configured), (("default",), "default", False))
        self.assertEqual(m.capability("audit_chain"), {"field": "prev", "hash": "sha256"})
        self.assertIsNone(m.capability("no_such_capability"), "unknown, not false")
        self.assertIn("result.get", m.schemas)

        rm = c.rm("arca://app/db")
        self.assertEqual((rm.version, rm.removed), (3, True))
        self.assertCode("not_found", c.get, "arca://app/db")

        raw = c.call("get", ref="arca://app/api")
        self.assertIsInstance(raw["value"], Secret)
        self.assertEqual(raw["value"].reveal(), "k")

        self.assertIsNone(c.shutdown())
        with self.assertRaises(ClosedError):
            c.list()
        self.assertEqual(c.close(), 0)

    def test_every_error_code(self) -> None:
        home, c = self.start(TWO_ENVS)
        self.assertCode("bad_request", c.put, "arca://bad ref", "x")
        self.assertIn('unknown env "nope"', self.assertCode("bad_request", c.get, "arca://app/db", env="nope").message)
        self.assertCode("bad_request", c.put, "arca://app/db", "")
        self.assertCode("unknown_op", c.call, "export")
        self.assertCode("not_found", c.rotate, "arca://app/missing", "x")
        self.assertCode("not_found", c.rm, "arca://app/missing")
        self.assertIn("does not exist", self.assertCode("op_error", c.get, "arca://app/db", env="ci").message)
        # A failed commit is op_error too: a directory where the temp file goes.
        c.put("arca://app/db", "v1")
        os.makedirs(os.path.join(home.vault_tmp(), "x"))
        self.assertIn("not committed", self.assertCode("op_error", c.put, "arca://app/db", "v2").message)
        shutil.rmtree(home.vault_tmp())
        self.assertEqual(c.get("arca://app/db").value.reveal(), "v1")

    def test_denied_carries_the_verdict(self) -> None:
        _, c = self.start(DENY)
        e = self.assertCode("denied", c.get, "arca://app/db", actor="agent:x")
        self.assertEqual(e.policy, Policy(allow=False, reason="not on fridays"))
        self.assertIn("denied by policy", str(e))
        self.assertEqual(c.manifest().protocol, "arca-serve/1", "meta-ops skip the PDP")

    def test_pdp_unreachable(self) -> None:
        _, c = self.start(FAIL)
        e = self.assertCode("pdp_unreachable", c.list)
        self.assertIsNone(e.policy)
        self.assertIn("exited with status 3", e.message)

    def test_policy_on_success_and_degraded(self) -> None:
        _, c = self.start(ALLOW)
        p = c.put("arca://app/db", "v")
        self.assertEqual(p.policy, Policy(allow=True, reason="ok by me", obligations=("log",)))
        self.assertEqual(c.get("arca://app/db").policy, p.policy)
        e = self.assertCode("not_found", c.get, "arca://app/missing")
        self.assertEqual(e.policy, p.policy, "the verdict rides on a later error too")
        _, c = self.start(DEGRADED)
        self.assertTrue(c.list().policy.degraded)  # type: ignore[union-attr]

    def test_arguments_are_checked_without_quoting_them(self) -> None:
        _, c = self.start()
        with self.assertRaises(TypeError) as cm:
            c.put("arca://app/db", b"bytes-are-not-a-value")  # type: ignore[arg-type]
        self.assertNotIn("bytes-are-not-a-value", str(cm.exception))
        with self.assertRaises(TypeError):
            c.get(42)  # type: ignore[arg-type]
        self.assertEqual(c.list().records, (), "a refused argument sends nothing")


if __name__ == "__main__":
    unittest.main()
