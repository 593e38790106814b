"""Approvals and grants: approval_required as an ApprovalRequired carrying
its approval, with_approval against a stand-in (its clock a fake one: no
test sleeps) and a real serve, the new ops' lines, and a value dropped at
its grant's expires_at."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from datetime import datetime, timezone
from typing import List, Optional

from arca_client import (ApprovalDenied, ApprovalRequired, ArcaError, Client, GetResult, Secret, ValueExpired,
                         approval)
from arca_client._secret import expiring

from .support import Home, fake_binary

HANG = 30.0
ID = "ap_2e2e07a12d71a020ed599842a201b06d"
T0 = datetime(2099, 1, 1, tzinfo=timezone.utc).timestamp()


class FakeClock:
    """A clock whose sleeps move it on at once, recording each."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.sleeps: List[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


class ApprovalFakeTest(unittest.TestCase):
    def start(self, *states: str) -> Client:
        d = tempfile.mkdtemp(prefix="arca-fake-")
        self.addCleanup(shutil.rmtree, d, True)
        self.log, states_file = os.path.join(d, "lines"), os.path.join(d, "states")
        with open(states_file, "w") as f:
            f.write("".join(s + "\n" for s in states))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FAKE_LOG": self.log, "FAKE_STATES": states_file}
        c = Client.start(fake_binary(d, "approvals"), environ=env)
        self.addCleanup(c.close)
        return c

    def lines(self) -> list:
        with open(self.log, "rb") as f:
            return [{k: v for k, v in json.loads(x).items() if k != "id"} for x in f.read().splitlines()]

    def get(self, c: Client):
        return lambda ap: c.get("arca://app/db", approval=ap, timeout=HANG)

    def test_the_error_carries_the_approval(self) -> None:
        c = self.start()
        with self.assertRaises(ApprovalRequired) as cm:
            c.get("arca://app/db", timeout=HANG)
        e = cm.exception
        self.assertIsInstance(e, ArcaError)
        self.assertEqual(e.code, "approval_required")
        a = e.approval
        self.assertEqual((a.id, a.summary, a.fingerprint, a.expires_at, a.url), (
            ID, "a caller that names no actor asks to get app/db in env default",
            "4553c33cc7709cb9af3514ab7ab5bb5f8699bd0971eb149e0f2998dd840c8108",
            datetime(2099, 1, 1, 0, 15, tzinfo=timezone.utc), f"http://127.0.0.1:7777/approvals/{ID}"))
        self.assertEqual(str(e), "arca serve: approval_required: approval required: " + a.summary)
        self.assertTrue(e.policy is not None and e.policy.reason == "prod")
        # resolve keeps the class, naming the variable.
        with self.assertRaises(ApprovalRequired) as cm:
            c.resolve({"DB": "arca://app/db"}, timeout=HANG)
        self.assertEqual((cm.exception.variable, cm.exception.approval.id), ("DB", ID))

    def test_approved_then_retried_with_the_approval(self) -> None:
        c = self.start("pending", "approved")
        fc = FakeClock(T0)
        g = c.with_approval(self.get(c), clock=fc.clock, sleep=fc.sleep)
        self.assertIsInstance(g, GetResult)
        self.assertEqual(g.value.reveal(), "fake-value")
        self.assertEqual(self.lines(), [
            {"op": "get", "ref": "arca://app/db"},
            {"op": "approval", "approval": ID},
            {"op": "approval", "approval": ID},
            {"op": "get", "ref": "arca://app/db", "approval": ID},
        ])
        self.assertEqual(fc.sleeps, [1.0])  # the default interval

    def test_denied_and_expired_give_up(self) -> None:
        for state in ("denied", "expired"):
            with self.subTest(state=state):
                c = self.start("pending", state)
                fc = FakeClock(T0)
                with self.assertRaises(ApprovalDenied) as cm:
                    c.with_approval(self.get(c), interval=60, clock=fc.clock, sleep=fc.sleep)
                self.assertEqual((cm.exception.state, cm.exception.approval.id), (state, ID))
                self.assertEqual(len(self.lines()), 3)  # no retry

    def test_no_longer_than_expires_at(self) -> None:
        c = self.start(*["pending"] * 8)
        fc = FakeClock(T0)
        with self.assertRaises(ApprovalDenied) as cm:
            c.with_approval(self.get(c), interval=240, clock=fc.clock, sleep=fc.sleep)
        self.assertEqual(cm.exception.state, "expired")
        self.assertEqual(fc.sleeps, [240, 240, 240, 180])

    def test_no_longer_than_the_timeout(self) -> None:
        c = self.start(*["pending"] * 8)
        fc = FakeClock(T0)
        with self.assertRaises(TimeoutError):
            c.with_approval(self.get(c), timeout=2.5, clock=fc.clock, sleep=fc.sleep)
        self.assertEqual(fc.sleeps, [1.0, 1.0, 0.5])
        self.assertEqual(len(self.lines()), 5)  # the get and four polls

    def test_none_asked(self) -> None:
        c = self.start()
        g = c.with_approval(lambda ap: c.get("arca://app/db", approval="ap_x", timeout=HANG))
        self.assertEqual(g.value.reveal(), "fake-value")
        self.assertEqual(len(self.lines()), 1)

    def test_the_new_ops_lines(self) -> None:
        c = self.start("approved")
        s = c.approve(ID, "grant", "human:ana", scope={"uses": 5, "ttl_s": 600}, timeout=HANG)
        self.assertEqual((s.approval, s.state), (ID, "approved"))
        c.approve(ID, "deny", "human:ana", scope={"uses": 1}, timeout=HANG)
        self.assertEqual(c.revoke(all=True, timeout=HANG).revoked, 0)
        c.revoke(grant="gr_1", timeout=HANG)
        c.revoke(ref="arca://app/db", timeout=HANG)
        c.approval(ID, timeout=HANG)
        self.assertEqual(self.lines(), [
            {"op": "approve", "approval": ID, "decision": "grant", "approver": "human:ana",
             "scope": {"ttl_s": 600, "uses": 5}},
            {"op": "approve", "approval": ID, "decision": "deny", "approver": "human:ana", "scope": {"uses": 1}},
            {"op": "revoke", "all": True},
            {"op": "revoke", "grant": "gr_1"},
            {"op": "revoke", "ref": "arca://app/db"},
            {"op": "approval", "approval": ID},
        ])
        with open(self.log, "rb") as f:
            self.assertIn(b'"scope":{"ttl_s":600,"uses":5}', f.read())
        for bad in ({"uses": "5"}, {"uses": True}, [5]):
            with self.assertRaises(TypeError):
                c.approve(ID, "grant", "h", scope=bad)  # type: ignore[arg-type]


class ExpiryTest(unittest.TestCase):
    def test_a_value_is_dropped_at_expires_at(self) -> None:
        end = datetime(2026, 11, 30, 8, 24, 14, 381353, tzinfo=timezone.utc)
        now = [end.timestamp() - 0.001]
        v = expiring("s3cret", end, lambda: now[0])
        self.assertEqual((v.reveal(), v.expires_at, str(v)), ("s3cret", end, "<redacted>"))
        now[0] = end.timestamp()
        with self.assertRaises(ValueExpired):
            v.reveal()
        now[0] -= 1000  # dropped: a clock turned back does not bring it back
        with self.assertRaises(ValueExpired):
            v.reveal()
        self.assertIsNone(Secret("x").expires_at)

    def test_a_result_with_expires_at_gets_a_value_that_expires(self) -> None:
        end = datetime(2026, 11, 30, 8, 24, 14, 381353, tzinfo=timezone.utc)
        g = GetResult("arca://app/db", "default", Secret("s3cret"), 1, end, end, expires_at=end)
        g = approval.with_expiry(g, lambda: end.timestamp())
        with self.assertRaises(ValueExpired):
            g.value.reveal()
        d = approval.with_expiry({"value": Secret("s3cret"), "expires_at": "2026-11-30T08:24:14.381353202Z"},
                                 lambda: end.timestamp() - 1)
        self.assertEqual((d["value"].reveal(), d["value"].expires_at), ("s3cret", end))
        plain = approval.with_expiry(GetResult("arca://app/db", "default", Secret("v"), 1, end, end), lambda: 2e9)
        self.assertEqual(plain.value.reveal(), "v")


# A PDP that allows a put and asks a human for a get; once one approved it
# allows it, for 60 seconds.
APPROVAL_PDP = ('[serve.pdp]\nexec = "jq -c \'if .op == \\"put\\" then {allow: true} elif .approval.state == '
                '\\"approved\\" then {allow: true, obligations: [\\"arca:ttl=60\\"]} else {allow: false, '
                'reason: \\"prod\\", obligations: [\\"arca:approval\\"]} end\'"\n')


class ApprovalServeTest(unittest.TestCase):
    def test_asked_approved_by_the_host_retried_under_a_grant(self) -> None:
        h = Home(APPROVAL_PDP)
        self.addCleanup(h.cleanup)
        with h.start() as c:
            c.put("arca://app/db", "s3cret", timeout=HANG)
            with self.assertRaises(ApprovalRequired) as cm:
                c.get("arca://app/db", timeout=HANG)
            asked = cm.exception.approval.id
            decided: List[Optional[str]] = []

            def approve(_: float) -> None:  # the host decides while it waits
                decided.append(c.approve(asked, "grant", "human:test", scope={"uses": 2}, timeout=HANG).state)

            g = c.with_approval(lambda ap: c.get("arca://app/db", approval=ap, timeout=HANG), sleep=approve)
            self.assertEqual((g.value.reveal(), decided), ("s3cret", ["approved"]))
            self.assertIsNotNone(g.expires_at)
            self.assertEqual(g.value.expires_at, g.expires_at)
            s = c.approval(asked, timeout=HANG)
            self.assertEqual((s.state, s.approver, s.scope.uses if s.scope else None), ("approved", "human:test", 2))
            self.assertEqual(c.revoke(ref="arca://app/db", timeout=HANG).revoked, 1)
