"""Approvals and grants (SPEC §14): the ApprovalRequired error made from
an ``approval_required`` response, a value dropped at the end of the grant
it was got under, and with_approval, which waits for a human's decision and
retries the request.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TypeVar

from ._read import Policy, parse_time
from ._secret import Secret, expiring
from .errors import Approval, ApprovalDenied, ApprovalRequired, ArcaError, Conflict, ProtocolError

if TYPE_CHECKING:
    from .client import Client

T = TypeVar("T")


def error_of(code: str, message: str, policy: Optional[Policy], details: Any) -> ArcaError:
    """The ArcaError of a failed response: an ApprovalRequired when it
    names an approval as the protocol says, a Conflict when it names the
    current version."""
    cause = details.get("cause") if isinstance(details, dict) else None
    current = details.get("current_version") if isinstance(details, dict) else None
    if code == "conflict" and type(current) is int and current >= 0:
        return Conflict(message, policy, current)
    a = details.get("approval") if isinstance(details, dict) else None
    if code == "approval_required" and isinstance(a, dict):
        try:
            approval = Approval(_text(a, "id"), _text(a, "summary"), _text(a, "fingerprint"),
                                parse_time(_text(a, "expires_at")),
                                a["url"] if type(a.get("url")) is str else None)
        except ProtocolError:
            approval = None
        if approval is not None:
            return ApprovalRequired(message, policy, approval)
    return ArcaError(code, message, policy, cause=cause if type(cause) is str else None)


def _text(d: Mapping[str, Any], name: str) -> str:
    v = d.get(name)
    if type(v) is not str:
        raise ProtocolError(f"an approval whose {name} is not a string")
    return v


def with_expiry(result: Any, clock: Callable[[], float] = time.time) -> Any:
    """result, its value made one that is dropped at its expires_at (a
    get's under a grant that ends in time), read on clock."""
    if isinstance(result, dict):  # call(): the result as a dict
        at = result.get("expires_at")
        if isinstance(result.get("value"), Secret) and type(at) is str:
            result["value"] = expiring(result["value"].reveal(), parse_time(at), clock)
        return result
    value, at = getattr(result, "value", None), getattr(result, "expires_at", None)
    if isinstance(value, Secret) and isinstance(at, datetime):
        result.value = expiring(value.reveal(), at, clock)
    return result


def with_approval(client: Client, call: Callable[[Optional[str]], T], *, interval: float = 1.0,
                  timeout: Optional[float] = None, clock: Callable[[], float] = time.time,
                  sleep: Callable[[float], None] = time.sleep) -> T:
    """Run call(None); when it raises ApprovalRequired, poll the approval
    every interval seconds until it is decided, for no longer than its
    expires_at and timeout (seconds, then TimeoutError) allow. Approved:
    run call(id) and return what it returns. Denied or expired: raise
    ApprovalDenied. clock (seconds since the epoch) and sleep are the
    clock, for a test."""
    if not interval > 0:
        raise ValueError("interval must be a positive number of seconds")
    try:
        return call(None)
    except ApprovalRequired as e:
        asked = e.approval
    until = None if timeout is None else clock() + timeout
    while True:
        s = client.approval(asked.id)
        if s.state == "approved":
            return call(asked.id)
        if s.state != "pending":
            raise ApprovalDenied(asked, s.state)
        now = clock()
        end = (s.expires_at or asked.expires_at).timestamp()
        if now >= end:
            raise ApprovalDenied(asked, "expired")
        if until is not None and now >= until:
            raise TimeoutError(f"approval {asked.id} was not decided in {timeout} s")
        sleep(min(interval, end - now, float("inf") if until is None else until - now))
