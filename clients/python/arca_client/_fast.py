"""The fast path of the commonest response: a get's success, in the shape
serve writes it (its fields in its order, no policy, strings of printable
ASCII with no escapes), read with one regular expression over the line's
bytes rather than decoded into dicts and read again. Any other line, or
one this does not match, goes the general way (json); tests hold the two
to the same answers.
"""

from __future__ import annotations

import re
from typing import Optional

from ._read import parse_time
from ._secret import Secret
from .results import GetResult

# A JSON string with nothing to unescape: printable ASCII but '"' and '\'.
_S = rb'"([\x20\x21\x23-\x5b\x5d-\x7e]*)"'
_N = rb'(0|[1-9][0-9]{0,17})'  # a JSON integer an int holds exactly
_GET = re.compile(
    rb'\{"id":' + _N + rb',"ok":true,"result":\{"ref":' + _S + rb',"env":' + _S + rb',"value":' + _S
    + rb',"version":' + _N + rb',"created_at":' + _S + rb',"updated_at":' + _S
    + rb'(?:,"rotated_at":' + _S + rb')?\}\}\n\Z')


def get_line(line: bytes, want: int) -> Optional[GetResult]:
    """The result of request want's get from its response line, or None
    when the line is not in the shape this reads (the general way reads it
    then, and says what is wrong with it)."""
    m = _GET.match(line)
    if m is None:
        return None
    id_, ref, env, value, version, created, updated, rotated = m.groups()
    if int(id_) != want:
        return None
    try:
        return GetResult(ref.decode("ascii"), env.decode("ascii"), Secret(value.decode("ascii")), int(version),
                         parse_time(created.decode("ascii")), parse_time(updated.decode("ascii")),
                         rotated_at=None if rotated is None else parse_time(rotated.decode("ascii")))
    except Exception:  # noqa: BLE001 - a time that is not one: the general way says so
        return None
