"""The fast path of a get's success (_fast.py) gives what the general way
(json, then the generated reader) gives, line for line, and leaves every
line it does not read whole to the general way."""

from __future__ import annotations

import unittest
from concurrent.futures import Future
from typing import Any, Mapping, Optional, Tuple

from arca_client import _fast, _wire
from arca_client._read import Policy
from arca_client.results import GetResult, read_get

T = "2026-12-06T06:23:55.044197314Z"
BODY = '"ref":"arca://app/db","env":"default","value":"s3cret","version":1,"created_at":"%s","updated_at":"%s"' % (T, T)


def general(d: Mapping[str, Any], policy: Optional[Policy]) -> GetResult:
    """read_get under another name: _wire takes the fast path for read_get itself only."""
    return read_get(d, policy)


def outcome(line: bytes, want: int, read: Any) -> Tuple[str, Any]:
    fut: Future[Any] = Future()
    broken = _wire._deliver((want, fut, read), line)
    if broken is not None:
        return ("out of step", broken)
    err = fut.exception()
    if err is not None:
        return (type(err).__name__, str(err))
    return ("ok", fut.result())


class FastTest(unittest.TestCase):
    def same(self, line: bytes, want: int = 7) -> None:
        self.assertEqual(outcome(line, want, read_get), outcome(line, want, general), line)

    def test_the_shapes_serve_writes_take_the_fast_path(self) -> None:
        for body in (BODY, BODY + ',"rotated_at":"%s"' % T, BODY.replace('"version":1', '"version":0'),
                     BODY.replace("s3cret", "")):
            line = ('{"id":7,"ok":true,"result":{%s}}\n' % body).encode()
            with self.subTest(body=body):
                self.assertIsNotNone(_fast.get_line(line, 7))
                self.same(line)

    def test_every_other_line_is_read_the_general_way(self) -> None:
        ok = '{"id":7,"ok":true,"result":{%s}}\n'
        lines = [
            ok % BODY.replace("s3cret", "s3\\ncret"),  # an escape
            ok % BODY.replace("s3cret", "s3\u00e9cret"),  # not ASCII
            ok % BODY.replace("s3cret", "s3\tcret"),  # a control character: not JSON
            ok % (BODY + ',"later":1'),  # a field from a later serve
            ok % BODY.replace('"version":1', '"version":01'),  # not a JSON number
            ok % BODY.replace('"version":1', '"version":123456789012345678901234'),
            ok % BODY.replace(T, "2026-13-06T06:23:55Z", 1),  # not a time
            ok % BODY.replace('"ref":"arca://app/db",', ""),  # a field missing
            '{"id":7,"ok":true,"result":{%s},"policy":{"allow":true,"reason":"r"}}\n' % BODY,
            '{"id":8,"ok":true,"result":{%s}}\n' % BODY,  # another id
            '{"id":07,"ok":true,"result":{%s}}\n' % BODY,
            '{"id":7,"ok":true,"result":{%s}} \n' % BODY,
            '{"id":null,"ok":false,"error":{"code":"bad_request","message":"m"}}\n',
            '{"id":7,"ok":false,"error":{"code":"not_found","message":"m"}}\n',
        ]
        for line in lines:
            b = line.encode("utf-8", "surrogatepass")
            with self.subTest(line=line):
                self.assertIsNone(_fast.get_line(b, 7))
                self.same(b)

    def test_a_cancelled_call_drops_its_value(self) -> None:
        fut: Future[Any] = Future()
        fut.cancel()
        line = ('{"id":7,"ok":true,"result":{%s}}\n' % BODY).encode()
        self.assertIsNone(_wire._deliver((7, fut, read_get), line))
        self.assertTrue(fut.cancelled())


if __name__ == "__main__":
    unittest.main()
