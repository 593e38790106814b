"""The audit wire: serve's stderr, one event a line.

The stderr thread reads it all the time (a stderr nobody reads fills its
pipe, and serve stops answering), reports readiness from the first line,
and, when the embedder passed ``on_event``, decodes each line and checks
it: ``seq`` runs 1, 2, 3 … and every event's ``prev`` is the hex SHA-256
of the line before it, its exact bytes without the newline.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Callable, Optional

from .errors import ClientError, StartError, StreamError
from ._read import Policy, parse_time, read_policy

# MAX_EVENT_LINE bounds an event line, as arca's own readers do
# (audit.MaxLine): serve writes far shorter ones.
MAX_EVENT_LINE = 4 << 20

# An event's ts is new each time: parsing it must not churn the cache that
# serves the records' times.
_parse_ts = parse_time.__wrapped__  # type: ignore[attr-defined]


@dataclass
class Event:
    """One audit event. It never carries a secret value (serve writes none
    to the wire). ``id`` is the request's id as parsed from the line (None
    when absent or null); ``line`` is the line's exact bytes, the ones the
    next event's ``prev`` hashes: keep those to keep a trail verifiable."""

    v: int
    ts: datetime
    seq: int
    event: str  # start, stop, warning, get, put, …, denied, error
    source: str
    op: str = ""
    outcome: str = ""  # "" on lifecycle events (start, stop, warning)
    id: Any = None
    actor: str = ""
    user: str = ""  # the OS account of the process: on serve's start event
    host: str = ""  # the machine it runs on: on serve's start event
    attestation_sha256: str = ""
    env: str = ""
    ref: str = ""
    version: Optional[int] = None
    code: str = ""
    message: str = ""
    policy: Optional[Policy] = None
    prev: str = ""
    line: bytes = b""


class EndedBeforeStart(StartError):
    """stderr closed before any line: start adds the exit status."""


OnEvent = Callable[[Optional[Event], Optional[Exception]], None]


def parse_event(line: bytes) -> Optional[Event]:
    """The event a line holds, or None when it holds none. Fields this
    client does not know are ignored."""
    try:
        d = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(d, dict):
        return None
    try:
        s = {k: d.get(k, "") for k in ("event", "source", "op", "outcome", "actor", "user", "host", "attestation_sha256",
                                      "env", "ref", "code", "message", "prev")}
        if any(type(v) is not str for v in s.values()) or type(d.get("v")) is not int:
            return None
        seq, version = d.get("seq"), d.get("version")
        if type(seq) is not int or seq < 1 or not (version is None or type(version) is int):
            return None
        return Event(v=d["v"], ts=_parse_ts(d.get("ts") if type(d.get("ts")) is str else ""), seq=seq,
                     id=d.get("id"), version=version, policy=read_policy(d.get("policy")), line=line, **s)
    except ClientError:
        return None


class Chain:
    """The checks of one stream: seq, and the links.

    A ``prev`` that is there must be the link of the line before it. One
    that is missing is a break only once the chain was promised: by the
    ``audit_chain`` capability in the manifest of start, or by a ``prev``
    earlier in the stream. A server that predates the chain writes none,
    and an absent capability is unknown, never false.
    """

    def __init__(self) -> None:
        self.seq = 0
        self.link = ""  # hex SHA-256 of the last line; "" before the first
        self.promised = False

    def step(self, e: Optional[Event], line: bytes) -> Optional[StreamError]:
        """What is wrong with the next line, or None."""
        err: Optional[StreamError] = None
        if e is None:
            err = StreamError(f"the line after seq {self.seq} is not an audit event")
        elif e.seq != self.seq + 1:
            err = StreamError(f"seq {e.seq} follows seq {self.seq}: the stream has a gap")
        elif e.prev != self.link and (e.prev or self.promised):
            err = StreamError(f"seq {e.seq} does not link to the line before it: the chain is broken")
        if e is not None:
            self.seq = e.seq
            self.promised = self.promised or bool(e.prev)
        self.link = hashlib.sha256(line).hexdigest()
        return err


def read_events(stream: IO[bytes], on_event: Optional[OnEvent], ready: Callable[[Optional[StartError]], None],
                fail: Callable[[str], None], chain: Chain) -> None:
    """The stderr thread: readiness from the first line, then every line
    checked and handed to on_event, or drained when there is none. A line
    over the cap fails the client (the wire is not arca's any more); the
    rest of the stream is still drained, never held."""
    started = False
    while True:
        try:
            line = stream.readline(MAX_EVENT_LINE + 2)
        except (OSError, ValueError) as e:
            # stderr undrained would stop serve: stop it instead.
            fail(f"reading arca serve's stderr failed: {type(e).__name__}")
            break
        if not line:
            break
        body = line[:-1] if line.endswith(b"\n") else line
        if len(body) > MAX_EVENT_LINE:
            err = StreamError(f"an audit line longer than {MAX_EVENT_LINE} bytes")
            if not started:
                started = True
                ready(StartError("arca serve wrote an overlong line before its start event"))
            _call(on_event, None, err)
            fail(f"the audit wire broke: {err}")
            _skip_line(stream, line)
            continue
        if started and on_event is None:
            continue  # nobody reads the stream: drained, not decoded
        e = parse_event(body)
        err = chain.step(e, body)
        _call(on_event, e, err)  # before readiness: start returns once on_event saw the start event
        if not started:
            started = True
            if e is not None and e.event == "start":
                ready(None)
            elif e is not None and e.event == "stop":
                ready(StartError(f"arca serve did not start: {e.message}", e.message))
            else:
                # Nothing was asked yet, so this line holds no value: it can
                # be shown, cut short (a usage error, a binary that is no arca).
                ready(StartError(f"arca serve wrote {body[:200]!r} before its start event"))
    if not started:
        ready(EndedBeforeStart("arca serve ended before its start event (its stderr closed)"))


def _call(on_event: Optional[OnEvent], e: Optional[Event], err: Optional[Exception]) -> None:
    if on_event is None:
        return
    try:
        on_event(e, err)
    except Exception:  # noqa: BLE001 - the wire must be drained whatever the callback does
        pass


def _skip_line(stream: IO[bytes], part: bytes) -> None:
    """Read past the rest of an overlong line, 64 KiB at a time."""
    try:
        while part and not part.endswith(b"\n"):
            part = stream.readline(64 << 10)
    except (OSError, ValueError):
        pass  # the next read says so
