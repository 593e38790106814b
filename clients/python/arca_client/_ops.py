"""The ops: a blocking method and a non-blocking ``submit_`` twin each.

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

from . import results as r
from ._secret import Secret, as_value
from ._wire import Reader, Settle, Waiter

Value = Union[str, Secret]
_Fields = Sequence[Tuple[str, Optional[str]]]


def _fields(ref: Optional[str], value: Optional[Value], env: Optional[str], actor: Optional[str],
            attestation: Optional[str]) -> _Fields:
    return (("ref", ref), ("env", env), ("value", None if value is None else as_value(value)),
            ("actor", actor), ("attestation", attestation))


def _left(timeout: Optional[float], began: float) -> Optional[float]:
    return None if timeout is None else max(timeout - (time.monotonic() - began), 0.0)


class Ops:
    """The op methods of Client."""

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

    # get -----------------------------------------------------------------

    def get(self, ref: str, *, env: Optional[str] = None, actor: Optional[str] = None,
            attestation: Optional[str] = None, timeout: Optional[float] = None) -> r.Got:
        """The value of ref (a Secret) and its metadata."""
        return self._call("get", _fields(ref, None, env, actor, attestation), r.read_get, timeout)

    def submit_get(self, ref: str, *, env: Optional[str] = None, actor: Optional[str] = None,
                   attestation: Optional[str] = None) -> Future[r.Got]:
        return self._future("get", _fields(ref, None, env, actor, attestation), r.read_get)

    # put -----------------------------------------------------------------

    def put(self, ref: str, value: Value, *, env: Optional[str] = None, actor: Optional[str] = None,
            attestation: Optional[str] = None, timeout: Optional[float] = None) -> r.Put:
        """Store value (a str or a Secret) at ref: creates or overwrites."""
        return self._call("put", _fields(ref, value, env, actor, attestation), r.read_put, timeout)

    def submit_put(self, ref: str, value: Value, *, env: Optional[str] = None, actor: Optional[str] = None,
                   attestation: Optional[str] = None) -> Future[r.Put]:
        return self._future("put", _fields(ref, value, env, actor, attestation), r.read_put)

    # rotate --------------------------------------------------------------

    def rotate(self, ref: str, value: Value, *, env: Optional[str] = None, actor: Optional[str] = None,
               attestation: Optional[str] = None, timeout: Optional[float] = None) -> r.Rotated:
        """Replace the value of an existing record (never creates one)."""
        return self._call("rotate", _fields(ref, value, env, actor, attestation), r.read_rotate, timeout)

    def submit_rotate(self, ref: str, value: Value, *, env: Optional[str] = None, actor: Optional[str] = None,
                      attestation: Optional[str] = None) -> Future[r.Rotated]:
        return self._future("rotate", _fields(ref, value, env, actor, attestation), r.read_rotate)

    # rm ------------------------------------------------------------------

    def rm(self, ref: str, *, env: Optional[str] = None, actor: Optional[str] = None,
           attestation: Optional[str] = None, timeout: Optional[float] = None) -> r.Removed:
        """Delete the record at ref."""
        return self._call("rm", _fields(ref, None, env, actor, attestation), r.read_rm, timeout)

    def submit_rm(self, ref: str, *, env: Optional[str] = None, actor: Optional[str] = None,
                  attestation: Optional[str] = None) -> Future[r.Removed]:
        return self._future("rm", _fields(ref, None, env, actor, attestation), r.read_rm)

    # list, check ---------------------------------------------------------

    def list(self, *, env: Optional[str] = None, actor: Optional[str] = None, attestation: Optional[str] = None,
             timeout: Optional[float] = None) -> r.Listed:
        """The env's records, metadata only."""
        return self._call("list", _fields(None, None, env, actor, attestation), r.read_list, timeout)

    def submit_list(self, *, env: Optional[str] = None, actor: Optional[str] = None,
                    attestation: Optional[str] = None) -> Future[r.Listed]:
        return self._future("list", _fields(None, None, env, actor, attestation), r.read_list)

    def check(self, *, env: Optional[str] = None, actor: Optional[str] = None, attestation: Optional[str] = None,
              timeout: Optional[float] = None) -> r.Checked:
        """Probe the env's vault."""
        return self._call("check", _fields(None, None, env, actor, attestation), r.read_check, timeout)

    def submit_check(self, *, env: Optional[str] = None, actor: Optional[str] = None,
                     attestation: Optional[str] = None) -> Future[r.Checked]:
        return self._future("check", _fields(None, None, env, actor, attestation), r.read_check)

    # meta-ops ------------------------------------------------------------

    def manifest(self, *, timeout: Optional[float] = None) -> r.Manifest:
        """The protocol, the limits, the envs and the capabilities."""
        return self._call("manifest", (), r.read_manifest, timeout)

    def submit_manifest(self) -> Future[r.Manifest]:
        return self._future("manifest", (), r.read_manifest)

    def shutdown(self, *, timeout: Optional[float] = None) -> None:
        """Ask serve to end the session once it answered; requests behind
        it get ClosedError. close() is still needed to reap it."""
        return self._call("shutdown", (), r.read_shutdown, timeout)

    def submit_shutdown(self) -> Future[None]:
        return self._future("shutdown", (), r.read_shutdown)

    # any op --------------------------------------------------------------

    def call(self, op: str, *, ref: Optional[str] = None, value: Optional[Value] = None, env: Optional[str] = None,
             actor: Optional[str] = None, attestation: Optional[str] = None,
             timeout: Optional[float] = None) -> Dict[str, Any]:
        """Any op by name, for one this client has no method for (a server
        may add ops): the result as a dict, a ``value`` in it a Secret."""
        return self._call(op, _fields(ref, value, env, actor, attestation), r.read_raw, timeout)

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
