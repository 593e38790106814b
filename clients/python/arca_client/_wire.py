"""The request and response wire: one writer, a FIFO queue of slots, one
reader.

Responses come in request order, so a call takes its place in the queue
when its line joins the pending lines, under the same lock: queue order is
write order. The writer thread writes every line that gathered while it
was busy in one write, so concurrent callers (or one caller submitting
futures) share a write. The reader thread hands each response line to the
slot at the head of the queue and checks the id it echoes (or null, on
serve's answer to a line it could not read: the head's by position). A
line serve could not read is refused before it is sent. A call that
times out keeps its slot: its response is read and dropped when it comes,
so later responses never shift. At most ``max_in_flight`` requests are on
the wire; a call beyond that waits for a response to free a place
(backpressure).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError
from json.encoder import encode_basestring_ascii
from typing import IO, Any, Callable, Deque, List, Mapping, Optional, Sequence, Tuple, Union

from .approval import error_of, with_expiry
from .errors import ClosedError, ProtocolError
from ._fast import get_line
from ._read import Policy, read_policy
from ._shapes import Count, Field
from .results import read_get

# MAX_REQUEST_LINE is serve's cap on a request line, its newline not
# counted. serve answers a longer line with id null: this client refuses it
# before it is sent.
MAX_REQUEST_LINE = 4 << 20

# MAX_RESPONSE_LINE bounds a response line. serve's requests are capped at
# 4 MiB and its responses stay far below this; a longer line is not
# serve's, and reading on would hold it all.
MAX_RESPONSE_LINE = 8 << 20

# A line's length as serve counts it is len(body) + _FRAME + the id's
# digits: '{"id":' in front, the body's newline not counted.
_FRAME = len('{"id":') - 1

_decode = json.JSONDecoder().raw_decode

Reader = Callable[[Mapping[str, Any], Optional[Policy]], Any]


class Waiter:
    """The slot of a blocking call: a Future's one use, at a fraction of
    its cost (no condition variable, one lock, released once)."""

    __slots__ = ("_done", "_value", "_err", "abandoned")

    def __init__(self) -> None:
        self._done = threading.Lock()
        self._done.acquire()
        self._value: Any = None
        self._err: Optional[BaseException] = None
        self.abandoned = False  # the caller gave up: its response is dropped unread

    def set_result(self, value: Any) -> None:
        if not self.abandoned:  # abandoned since the reader looked: dropped
            self._value = value
        self._done.release()

    def abandon(self) -> None:
        """The caller gives up on this call: its response is dropped unread
        when it comes, and a value it already holds is let go."""
        self.abandoned = True
        self._value = None

    def set_exception(self, err: BaseException) -> None:
        self._err = err
        self._done.release()

    def cancelled(self) -> bool:
        """As a Future's: the caller gave up on the call."""
        return self.abandoned

    def result(self, timeout: Optional[float]) -> Any:
        """The value, or the error raised; TimeoutError after timeout
        seconds (the slot stays: its response is dropped when it comes)."""
        if not self._done.acquire(timeout=-1 if timeout is None else timeout):
            self.abandon()
            raise TimeoutError("arca serve did not answer in time")
        if self._err is not None:
            raise self._err
        return self._value


Settle = Union["Future[Any]", Waiter]
_Slot = Tuple[int, Settle, Reader]


class LineTooLong(ValueError):
    """A request line over serve's cap, found once its id is known."""


def encode_body(op: str, fields: Sequence[Tuple[str, Field]]) -> bytes:
    """A request line from its op on: ``,"op":…,…}\\n``; the id goes in
    front when the line takes its place. Built by hand with json's own
    string encoder: no dict, no general encoder on the hot path. A field
    whose value is None is left out; a tuple is an array of strings, a
    dict an object of strings, tuples of strings or ints (_shapes made
    them).

    A line serve cannot read (a str with no UTF-8 form, a line over the
    cap) is refused here, before anything is sent: serve would answer it
    with id null and bad_request, so sending it could only fail. The errors
    name the field, never its value: ValueError, TypeError for a non-str."""
    if type(op) is not str or not op.isascii():
        _text("op", op)
    parts = [',"op":', encode_basestring_ascii(op)]
    for name, v in fields:
        if v is None:
            continue
        if type(v) is bool:  # a boolean field (scrub's final)
            parts += [',"', name, '":', "true" if v else "false"]
            continue
        if type(v) is Count:  # version, if_version (_shapes checked it)
            parts += [',"', name, '":', int.__repr__(v)]
            continue
        if type(v) is tuple or type(v) is dict:  # args, services, versions; headers, query
            parts += [',"', name, '":', _json(name, v)]
            continue
        if type(v) is not str or not v.isascii():  # ASCII, the common case, is a flag read
            _text(name, v)
        parts += [',"', name, '":', encode_basestring_ascii(v)]
    parts.append("}\n")
    body = "".join(parts).encode("ascii")
    if len(body) + _FRAME + 1 > MAX_REQUEST_LINE:  # with the shortest id, 1 digit
        raise ValueError(too_long(op, fields))
    return body


def _json(name: str, v: Union[Tuple[str, ...], Tuple[Count, ...], Dict[str, Union[str, int, Tuple[str, ...]]]]) -> str:
    """A tuple of strings or of Counts as a JSON array, a dict of strings, ints or
    tuples of strings as an object, each string checked as a field's is."""
    if type(v) is tuple and v and all(type(n) is Count for n in v):  # destroy's versions
        return "[" + ",".join(int.__repr__(n) for n in v) + "]"
    if type(v) is tuple:
        for s in v:
            _text(name, s)
        return "[" + ",".join(encode_basestring_ascii(s) for s in v) + "]"
    parts = []
    for k, x in v.items():
        _text(name, k)
        if type(x) is int:  # an object of integers (approve's scope)
            parts.append(encode_basestring_ascii(k) + ":" + str(x))
            continue
        parts.append(encode_basestring_ascii(k) + ":" + (encode_basestring_ascii(x) if type(x) is str else _json(name, x)))
        if type(x) is str:
            _text(name, x)
    return "{" + ",".join(parts) + "}"


def _text(name: str, v: object) -> None:
    """Refuse a field that is not a str, or one with no UTF-8 form."""
    if type(v) is not str:
        raise TypeError(f"field {name!r} must be a str, not {type(v).__name__}")
    try:
        v.encode("utf-8")
        return
    except UnicodeEncodeError:
        pass
    # Raised outside the except block: the UnicodeEncodeError, which holds
    # the whole str, must not ride along as this error's context.
    raise ValueError(f"field {name!r} holds a surrogate code point: a str with no UTF-8 form is not sent")


def too_long(op: str, fields: Sequence[Tuple[str, Field]]) -> str:
    """Why a request line is refused for its length: it names the longest
    field, never its length (the length of a value tells of the value)."""
    sizes = [(len(encode_basestring_ascii(v)), name) for name, v in fields if type(v) is str]
    longest = f" (its longest field is {max(sizes)[1]!r})" if sizes else ""
    return f"the {op} request line would be longer than serve's cap of {MAX_REQUEST_LINE} bytes{longest}"


class Wire:
    """The pipelined session over serve's stdin and stdout."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], max_in_flight: int, kill: Callable[[], None]) -> None:
        self._stdin, self._stdout, self._kill = stdin, stdout, kill
        self._lock = threading.Lock()  # the pending lines, the queue, the ids, the state
        self._wake = threading.Condition(self._lock)  # the writer: lines are pending, or stop
        self._pending: List[bytes] = []
        self._queue: Deque[_Slot] = deque()
        self._next_id = 0
        # The window: requests on the wire, counted under the lock; callers
        # past max_in_flight wait on room (a Semaphore would take a second
        # lock a call).
        self._room = threading.Condition(self._lock)
        self._max, self._in_flight, self._waiting = max_in_flight, 0, 0
        self._gone: Optional[str] = None  # why calls fail now
        self._stopping = False
        self.writer = threading.Thread(target=self._write_loop, name="arca-client-writer", daemon=True)
        self.reader = threading.Thread(target=self._read_loop, name="arca-client-reader", daemon=True)

    def submit(self, body: bytes, read: Reader, timeout: Optional[float], fut: Settle) -> None:
        """Queue a request line (from encode_body), to be settled in fut.
        Waits for a place in the window, at most timeout seconds."""
        with self._lock:
            if self._in_flight >= self._max and self._gone is None and not self._stopping:
                self._wait_for_room(timeout)
            if self._gone is not None or self._stopping:
                raise ClosedError(self._gone or "the client is closed")
            if len(body) + _FRAME + 20 > MAX_REQUEST_LINE and \
                    len(body) + _FRAME + len(b"%d" % (self._next_id + 1)) > MAX_REQUEST_LINE:
                # Within a few bytes of the cap the id's own digits decide.
                # Refused before it takes a place: the window is untouched.
                raise LineTooLong()
            self._in_flight += 1
            self._next_id += 1
            self._queue.append((self._next_id, fut, read))
            if not self._pending:
                self._wake.notify()
            self._pending.append(b'{"id":%d%s' % (self._next_id, body))

    def _wait_for_room(self, timeout: Optional[float]) -> None:
        """Wait, holding the lock, until the window has room or the wire is
        gone; at most timeout seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._waiting += 1
        try:
            while self._in_flight >= self._max and self._gone is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"no room in the window of requests in flight within {timeout} s")
                self._room.wait(left)
        finally:
            self._waiting -= 1

    def _free(self, n: int) -> None:
        """n requests left the wire (lock held): wake who waits for room."""
        self._in_flight -= n
        if self._waiting:
            self._room.notify(n)

    def stop(self) -> None:
        """Write what is pending, then close serve's stdin: EOF ends the
        session once serve answered what it read."""
        with self._lock:
            self._stopping = True
            self._wake.notify()

    def fail(self, reason: str) -> None:
        """Fail every call from now on with reason, and kill serve: its wire
        cannot be trusted to stay in step."""
        with self._lock:
            if self._gone is None:
                self._gone = reason
            self._room.notify_all()
        self._kill()

    def _write_loop(self) -> None:
        broken = False
        while True:
            with self._lock:
                while not self._pending and not self._stopping:
                    self._wake.wait()
                lines, self._pending = self._pending, []
                stopping = self._stopping
            if lines and not broken:
                try:
                    self._stdin.write(b"".join(lines))
                    self._stdin.flush()
                except (OSError, ValueError):
                    # serve stopped reading (it exited, or read a shutdown):
                    # the reader fails what is waiting when stdout closes.
                    broken = True
            if stopping:
                try:
                    self._stdin.close()
                except (OSError, ValueError):
                    pass
                return

    def _read_loop(self) -> None:
        reason = "arca serve is gone (its stdout closed)"
        try:
            while True:
                line = self._stdout.readline(MAX_RESPONSE_LINE + 2)
                if not line:
                    break
                if not line.endswith(b"\n") or len(line) > MAX_RESPONSE_LINE + 1:
                    if len(line) > MAX_RESPONSE_LINE:
                        reason = f"a response line longer than {MAX_RESPONSE_LINE} bytes"
                        self.fail(reason)
                    else:
                        reason = "arca serve ended in the middle of a response"
                    break
                with self._lock:
                    slot = self._queue.popleft() if self._queue else None
                    if slot is not None:
                        self._free(1)
                if slot is None:
                    # Its length only: the line may hold a value.
                    reason = f"a response ({len(line)} bytes) with no request waiting for it: the wire is out of step"
                    self.fail(reason)
                    break
                broken = _deliver(slot, line)
                if broken is not None:
                    reason = broken
                    self.fail(reason)
                    _set(slot[1], None, ClosedError(reason))
                    break
                # Let go before the next read blocks: held until the next
                # response, the slot would keep its value (and the line its
                # bytes) alive long after the caller dropped them.
                slot = None
                line = b""
        except Exception as e:  # noqa: BLE001 - the reader must fail the queue, never die with it waiting
            reason = f"reading arca serve's stdout failed: {type(e).__name__}"
        finally:
            self._fail_queue(reason)

    def _fail_queue(self, reason: str) -> None:
        with self._lock:
            if self._gone is None:
                self._gone = reason
            reason = self._gone
            slots = list(self._queue)
            self._queue.clear()
            self._free(len(slots))
            self._room.notify_all()
        for _, fut, _ in slots:
            _set(fut, None, ClosedError(reason))


def _deliver(slot: _Slot, line: bytes) -> Optional[str]:
    """Settle a slot's future from its response line. Returns why the wire
    is out of step when it is, else None. Nothing from the line goes into
    an error but serve's code and message, which never hold a value."""
    want, fut, read = slot
    if read is read_get:
        got = get_line(line, want)
        if got is not None:
            if not fut.cancelled():  # else a value nobody waits for: dropped
                _set(fut, got, None)
            return None
    try:
        # raw_decode: json.loads's own checks cost twice the parse, and
        # serve's line is one object and a newline.
        d = _decode(line.decode("utf-8"))[0]
    except (ValueError, RecursionError):
        d = None  # not raised from here: the exception would hold the line
    if not isinstance(d, dict):
        return f"the response to request {want} is not a JSON object: the wire is out of step"
    got = d.get("id")
    if (type(got) is not int or got != want) and not (got is None and "id" in d and d.get("ok") is False):
        # serve answers a line it could not read (not UTF-8, too long, too
        # deep) with id null and an error: still this slot's answer, by
        # position. Any other id, or a null on a success, is out of step.
        return f"the response to request {want} carries another id: the wire is out of step"
    if fut.cancelled():
        return None  # a value nobody waits for is not wrapped, only dropped
    value: Any = None
    err: Optional[Exception] = None
    unreadable = False
    try:
        policy = read_policy(d.get("policy"))
        ok = d.get("ok")
        if ok is True:
            result = d.get("result")
            if not isinstance(result, dict):
                raise ProtocolError("a success response without a result object")
            value = read(result, policy)
            if "expires_at" in result:  # a get under a grant: its value is dropped then
                value = with_expiry(value)
        elif ok is False:
            e = d.get("error")
            if not isinstance(e, dict) or type(e.get("code")) is not str or type(e.get("message")) is not str:
                raise ProtocolError("a failed response without an error code and message")
            err = error_of(e["code"], e["message"], policy, e.get("details"))
        else:
            raise ProtocolError("a response whose ok is not a boolean")
    except ProtocolError as pe:
        err = pe
    except Exception:  # noqa: BLE001 - a reader's bug fails its call, not the session
        unreadable = True  # the exception is left behind: it may quote the result
    if unreadable:
        err = ProtocolError("a result this client cannot read")
    _set(fut, value, err)
    return None


def _set(fut: Settle, value: Any, err: Optional[BaseException]) -> None:
    try:
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(value)
    except InvalidStateError:
        pass  # the caller cancelled it: the response is dropped
