"""What every op's call does; each op's own methods are generated into
_methods.py from the manifest's op list, a blocking method and a
non-blocking ``submit_`` twin each.

A blocking call with ``timeout=`` (seconds) raises TimeoutError when serve
has not answered in time; its request stays on the wire and keeps its
slot, and its response is dropped when it comes. The ``submit_`` forms
return a ``concurrent.futures.Future`` at once (they wait only while the
window of requests in flight is full): one thread can pipeline many
requests that way. Cancelling such a future drops its response.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar

from . import results as r
from ._request import Fields as _Fields, fields as _fields
from ._secret import Secret
from ._wire import Reader, Settle, Waiter
from .approval import with_approval
from .errors import ApprovalRequired, ArcaError, ClosedError, Conflict


def _for_variable(name: str, ref: str, e: BaseException) -> BaseException:
    """The error e of the get of name's ref, naming both."""
    if isinstance(e, ApprovalRequired):
        return ApprovalRequired(e.message, e.policy, e.approval, variable=name, ref=ref)
    if isinstance(e, Conflict):
        return Conflict(e.message, e.policy, e.current_version, variable=name, ref=ref)
    if isinstance(e, ArcaError):
        return ArcaError(e.code, e.message, e.policy, variable=name, ref=ref, cause=e.cause)
    if isinstance(e, ClosedError):
        return ClosedError(e.reason, variable=name, ref=ref)
    return TimeoutError(f"{name} ({ref}): {e}")


def _shown(ref: object) -> str:
    """ref as an error names it: a str as its ASCII form, anything else by
    its type (a ref is never a secret, but it may hold any character)."""
    return ascii(ref)[1:-1] if isinstance(ref, str) else type(ref).__name__


def _left(timeout: Optional[float], began: float) -> Optional[float]:
    return None if timeout is None else max(timeout - (time.monotonic() - began), 0.0)


T = TypeVar("T")


class Calls:
    """What Client's op methods share: a call by op name, and resolve."""

    def _submit(self, op: str, fields: _Fields, read: Reader, timeout: Optional[float], fut: Settle) -> None:
        raise NotImplementedError

    def _call(self, op: str, fields: _Fields, read: Reader, timeout: Optional[float]) -> Any:
        began = time.monotonic()
        w = Waiter()
        self._submit(op, fields, read, timeout, w)
        return w.result(_left(timeout, began))

    def _future(self, op: str, fields: _Fields, read: Reader) -> Future[Any]:
        fut: Future[Any] = Future()
        self._submit(op, fields, read, None, fut)
        return fut

    def with_approval(self, call: Callable[[Optional[str]], T], *, interval: float = 1.0,
                      timeout: Optional[float] = None, clock: Callable[[], float] = time.time,
                      sleep: Callable[[float], None] = time.sleep) -> T:
        """Run call(None); when a human must approve it first
        (ApprovalRequired), wait for the decision, polling the approval op
        every interval seconds, for no longer than the approval's
        expires_at and timeout allow, and run call(approval_id) once it is
        approved; a denied or expired approval raises ApprovalDenied. See
        arca_client.approval.with_approval."""
        return with_approval(self, call, interval=interval, timeout=timeout, clock=clock, sleep=sleep)  # type: ignore[arg-type]

    def resolve(self, refs: Mapping[str, str], *, env: Optional[str] = None, actor: Optional[str] = None,
                attestation: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Secret]:
        """Get every ref of refs (name -> ref) at once, pipelined: the
        common case of filling a child's environment. Returns name ->
        Secret; the first failure (in refs' order) is raised, with no
        values: the gets still on the wire are abandoned (their responses
        dropped unread, as a timed-out call's are) and what was gathered is
        let go. timeout bounds the whole. The error of a get (ArcaError,
        ClosedError, TimeoutError) is raised naming the variable and its
        ref, as the Go client's does: ``B (arca://app/missing): arca serve:
        not_found: ...``."""
        began = time.monotonic()
        waiting: List[Tuple[str, str, Waiter]] = []
        out: Dict[str, Secret] = {}
        try:
            for name, ref in refs.items():
                w = Waiter()
                refused: Optional[Exception] = None
                try:
                    fields = _fields(ref=ref, env=env, actor=actor, attestation=attestation)
                    self._submit("get", fields, r.read_get, _left(timeout, began), w)
                except (ArcaError, ClosedError, TimeoutError) as e:
                    raise _for_variable(name, ref, e) from e
                except (TypeError, ValueError) as e:
                    refused = e
                if refused is not None:
                    # Raised outside the handler: the refusal's own context
                    # (a codec's error, which holds the str) does not ride
                    # along.
                    kind = TypeError if isinstance(refused, TypeError) else ValueError
                    err = kind(f"{name} ({_shown(ref)}): {refused}")
                    refused = None
                    raise err
                waiting.append((name, ref, w))
            for name, ref, w in waiting:
                try:
                    out[name] = w.result(_left(timeout, began)).value
                except (ArcaError, ClosedError, TimeoutError) as e:
                    raise _for_variable(name, ref, e) from e
        except BaseException:
            # The exception's traceback holds this frame: nothing it can
            # reach may hold a value.
            for _, _, w in waiting:
                w.abandon()
            waiting.clear()
            out.clear()
            raise
        return out
