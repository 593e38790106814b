"""A scrubbing writer: what an agent host pipes a tool's output through
before a model reads it."""

from __future__ import annotations

import codecs
from typing import IO, Any, Dict, Optional, Tuple, Union

# The most text one scrub request carries: far under serve's line cap once
# escaped.
_CHUNK = 256 << 10


class ScrubWriter:
    """A file-like writer that sends what is written to it to serve as the
    chunks of one scrub stream, named stream, and writes the text on to out
    with every value the session released redacted. serve holds back what
    could be the start of a value; close ends the stream and writes the
    rest, so any split of the output gives the same text. It takes str or
    bytes (read as UTF-8: a character split across writes is kept whole,
    bytes that are not UTF-8 become U+FFFD). redactions counts the
    placeholders written, by ref; unscrubbable is what serve's last answer
    listed. Not safe for concurrent use; close does not close out."""

    def __init__(self, client: Any, out: IO[str], stream: str, *, env: Optional[str] = None) -> None:
        self._client, self._out, self._stream, self._env = client, out, stream, env
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._open = False
        self.closed = False
        self.redactions: Dict[str, int] = {}
        self.unscrubbable: Tuple[str, ...] = ()

    def write(self, data: Union[str, bytes]) -> int:
        if self.closed:
            raise ValueError("write to a closed ScrubWriter")
        text = data if isinstance(data, str) else self._decoder.decode(data)
        self._send(text, False)
        return len(data)

    def flush(self) -> None:
        """Nothing to do: serve holds back what it must, and each write's
        answer is written at once."""

    def close(self) -> None:
        if self.closed:
            return
        self._send(self._decoder.decode(b"", final=True), True)
        self.closed = True

    def __enter__(self) -> "ScrubWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _send(self, text: str, final: bool) -> None:
        i = 0
        while True:
            part = text[i:i + _CHUNK]
            i += len(part)
            last = final and i >= len(text)
            if part == "" and (not last or not self._open):
                return  # nothing to send, or no stream to end
            res = self._client.scrub(part, stream=self._stream, final=last, env=self._env)
            self._open = not last
            for r in res.redactions:
                self.redactions[r.ref] = self.redactions.get(r.ref, 0) + r.count
            self.unscrubbable = res.unscrubbable
            if res.text:
                self._out.write(res.text)
            if i >= len(text):
                return
