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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _read, results as r
from ._secret import Secret, as_value
from ._wire import Reader, Settle, Waiter

Value = Union[str, Secret]
_Fields = Sequence[Tuple[str, Optional[str]]]


def _fields(ref: Optional[str] = None, value: Optional[Value] = None, env: Optional[str] = None,
            actor: Optional[str] = None, attestation: Optional[str] = None) -> _Fields:
    return (("ref", ref), ("env", env), ("value", None if value is None else as_value(value)),
            ("actor", actor), ("attestation", attestation))


def _left(timeout: Optional[float], began: float) -> Optional[float]:
    return None if timeout is None else max(timeout - (time.monotonic() - began), 0.0)


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

    # any op --------------------------------------------------------------

    def call(self, op: str, *, ref: Optional[str] = None, value: Optional[Value] = None, env: Optional[str] = None,
             actor: Optional[str] = None, attestation: Optional[str] = None,
             timeout: Optional[float] = None) -> Dict[str, Any]:
        """Any op by name, for one this client has no method for (a server
        may add ops): the result as a dict, a ``value`` in it a Secret."""
        return self._call(op, _fields(ref, value, env, actor, attestation), _read.read_raw, timeout)

    def resolve(self, refs: Mapping[str, str], *, env: Optional[str] = None, actor: Optional[str] = None,
                attestation: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Secret]:
        """Get every ref of refs (name -> ref) at once, pipelined: the
        common case of filling a child's environment. Returns name ->
        Secret; the first failure (in refs' order) is raised, with no
        values: the gets still on the wire are abandoned (their responses
        dropped unread, as a timed-out call's are) and what was gathered is
        let go. timeout bounds the whole."""
        began = time.monotonic()
        waiting: List[Tuple[str, Waiter]] = []
        out: Dict[str, Secret] = {}
        try:
            for name, ref in refs.items():
                w = Waiter()
                self._submit("get", _fields(ref, None, env, actor, attestation), r.read_get, _left(timeout, began), w)
                waiting.append((name, w))
            for name, w in waiting:
                out[name] = w.result(_left(timeout, began)).value
        except BaseException:
            # The exception's traceback holds this frame: nothing it can
            # reach may hold a value.
            for _, w in waiting:
                w.abandon()
            waiting.clear()
            out.clear()
            raise
        return out
