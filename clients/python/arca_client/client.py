"""Client: one arca serve process, spawned and spoken to over its pipes.

Where every byte goes: requests to serve's stdin (the writer thread),
responses from its stdout (the reader thread), audit events from its
stderr (the stderr thread, which reads it all the time: a stderr nobody
reads fills its pipe and serve stops answering). Nothing is written to
this process's own stdout, stderr or logs.

The pipes are buffered (64 KiB): an unbuffered pipe makes readline one
read(2) per byte, and the client some thirty times slower. Lines that
gather while the writer is busy go out in one write and one flush.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from types import TracebackType
from typing import Mapping, Optional, Sequence, Tuple, Type, Union

from ._methods import Ops
from ._wire import LineTooLong, Reader, Settle, Wire, encode_body, too_long
from .errors import ClientError, ProtocolError, StartError
from .events import Chain, EndedBeforeStart, OnEvent, read_events

PROTOCOL = "arca-serve/1"

# The size of each pipe's buffer: what a Linux pipe holds, so one read
# takes a full pipe. A 1 MiB buffer measured no faster.
PIPE_BUFFER = 64 << 10

StrPath = Union[str, "os.PathLike[str]"]


class Client(Ops):
    """One arca serve process. Safe for concurrent use from threads; see
    :meth:`start`. Every op has a blocking form (``get``) and a
    non-blocking one (``submit_get``) that returns a
    ``concurrent.futures.Future``."""

    def __init__(self, proc: subprocess.Popen[bytes], max_in_flight: int, close_timeout: float,
                 on_event: Optional[OnEvent]) -> None:
        """Use :meth:`start`."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._close_timeout = close_timeout
        self._closing = threading.Lock()
        self._closed = False
        self._wire = Wire(proc.stdin, proc.stdout, max_in_flight, self._kill)
        self._ready = threading.Event()
        self._start_error: Optional[StartError] = None
        self._chain = Chain()
        self._events = threading.Thread(target=read_events, name="arca-client-events", daemon=True,
                                        args=(proc.stderr, on_event, self._on_ready, self._wire.fail, self._chain))

    @classmethod
    def start(cls, binary: StrPath, *, config: Optional[StrPath] = None, env: Optional[str] = None,
              environ: Optional[Mapping[str, str]] = None, cwd: Optional[StrPath] = None,
              max_in_flight: int = 256, start_timeout: float = 10.0, close_timeout: float = 5.0,
              on_event: Optional[OnEvent] = None) -> Client:
        """Spawn ``binary serve`` and wait until it is ready.

        ``binary`` without a slash is looked up on this process's PATH.
        ``config`` pins the config (``--config``); else serve looks for one
        itself, in ``cwd`` among other places. ``env`` is ``--env``.
        ``environ`` is serve's whole environment; None gives it none at
        all, so set HOME in it, or pin the config. ``on_event(event, err)``
        gets every audit event, in order, from the stderr thread: it must
        return fast (serve waits while it runs), and ``err`` is set when
        the line breaks the stream (not an event, a seq gap, a broken
        chain).

        Readiness is serve's ``start`` event. A serve that cannot start
        raises StartError holding its own ``stop`` message; so do a stderr
        that closes first, and no start within ``start_timeout`` seconds.
        Then the manifest is asked, and a protocol other than PROTOCOL is
        refused (ProtocolError).
        """
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        path = os.fspath(binary)
        if os.sep not in path:
            found = shutil.which(path)
            if found is None:
                raise StartError(f"{path!r} is not found on PATH")
            path = found
        args = [path, "serve"]
        if config is not None:
            args += ["--config", os.fspath(config)]
        if env is not None:
            args += ["--env", env]
        try:
            proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    bufsize=PIPE_BUFFER, env=dict(environ or {}), cwd=cwd, close_fds=True)
        except OSError as e:
            where = f" ({e.filename})" if e.filename else ""
            raise StartError(f"start {path}: {e.strerror or type(e).__name__}{where}") from None
        c = cls(proc, max_in_flight, close_timeout, on_event)
        deadline = time.monotonic() + start_timeout
        try:
            c._wire.writer.start()
            c._wire.reader.start()
            c._events.start()
            if not c._ready.wait(start_timeout):
                raise StartError(f"arca serve was not ready after {start_timeout} s")
            if isinstance(c._start_error, EndedBeforeStart):
                # Killed, or not arca at all: its exit status says which.
                try:
                    status = f"exit status {proc.wait(close_timeout)}"
                except subprocess.TimeoutExpired:
                    status = "still running"
                raise StartError(f"{c._start_error} ({status})")
            if c._start_error is not None:
                raise c._start_error
            try:
                m = c.manifest(timeout=max(deadline - time.monotonic(), 0.0))
            except (ClientError, TimeoutError) as e:
                raise StartError(f"the manifest: {e}") from None
            if m.protocol != PROTOCOL:
                raise ProtocolError(f"arca serve speaks {m.protocol!r}, this client {PROTOCOL!r}")
            if m.capability("audit_chain") is not None:
                c._chain.promised = True
        except BaseException:
            c._kill()
            c.close()
            raise
        return c

    def _on_ready(self, err: Optional[StartError]) -> None:
        self._start_error = err
        self._ready.set()

    def _submit(self, op: str, fields: Sequence[Tuple[str, Optional[str]]], read: Reader,
                timeout: Optional[float], fut: Settle) -> None:
        try:
            self._wire.submit(encode_body(op, fields), read, timeout, fut)
            return
        except LineTooLong:
            pass  # the wire knows the line only: the message names the field
        raise ValueError(too_long(op, fields))

    @property
    def pid(self) -> int:
        """serve's process id."""
        return self._proc.pid

    def close(self) -> int:
        """End the session: close serve's stdin (EOF; serve answers what it
        read, then exits), wait for it to exit, and kill it when it has not
        after ``close_timeout`` seconds. Returns serve's exit status (0 for
        a clean end, negative for the signal that killed it). Calls made
        after it raise ClosedError. Safe to call more than once, from any
        thread: every call returns once serve is gone."""
        with self._closing:
            if not self._closed:
                self._closed = True
                self._end()
            return self._proc.returncode

    def _end(self) -> None:
        self._wire.stop()
        try:
            self._proc.wait(self._close_timeout)
        except subprocess.TimeoutExpired:
            self._kill()
            self._proc.wait()
        threads = [t for t in (self._wire.writer, self._wire.reader, self._events) if t.is_alive()]
        for t in threads:
            t.join(self._close_timeout)
        if not any(t.is_alive() for t in threads):
            # Only now: closing a pipe a thread still reads would block on its lock.
            for f in (self._proc.stdout, self._proc.stderr):
                if f is not None:
                    f.close()

    def _kill(self) -> None:
        try:
            self._proc.kill()
        except OSError:
            pass  # already gone

    def __enter__(self) -> Client:
        return self

    def __exit__(self, typ: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()
