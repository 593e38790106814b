"""How results are read off the wire: the helpers the generated readers
of results.py call, the policy verdict, and the reader of an op this
client has no type for.

Readers take the fields they know and ignore the rest: the protocol lets a
server add fields to responses, results and events, so an unknown field is
never an error. A field the protocol says is always there and is not (or
has the wrong type) is a ProtocolError naming the field, never quoting the
value.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._secret import Secret
from .errors import ProtocolError

# RFC 3339 as serve writes it (always 9 fractional digits and Z), and a
# little looser: Python 3.9's datetime.fromisoformat takes neither 9
# digits nor Z, so times are read here.
_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)\Z")


@functools.lru_cache(maxsize=4096)
def parse_time(s: str) -> datetime:
    """An RFC 3339 time as an aware datetime in UTC. datetime holds
    microseconds: the wire's nanoseconds are cut (never rounded, so the
    order of two times is kept). Cached: every get of a record carries
    the same times, and a datetime is immutable."""
    m = _TIME.match(s)
    if m is None:
        raise ProtocolError("a time that is not RFC 3339")
    frac = (m.group(7) or "")[:6].ljust(6, "0")
    tz = m.group(8)
    offset = timezone.utc
    if tz not in ("Z", "z"):
        sign = -1 if tz[0] == "-" else 1
        offset = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        t = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                     int(m.group(5)), int(m.group(6)), int(frac), tzinfo=offset)
    except ValueError:
        raise ProtocolError("a time that is not RFC 3339") from None
    return t if offset is timezone.utc else t.astimezone(timezone.utc)


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    if type(v) is not str:
        raise ProtocolError(f"result field {key!r} is missing or not a string")
    return v


def _int(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key)
    if type(v) is not int:
        raise ProtocolError(f"result field {key!r} is missing or not an integer")
    return v


def _bool(d: Mapping[str, Any], key: str, default: Optional[bool] = None) -> bool:
    v = d.get(key, default)
    if type(v) is not bool:
        raise ProtocolError(f"result field {key!r} is missing or not a boolean")
    return v


def _strs(d: Mapping[str, Any], key: str) -> Tuple[str, ...]:
    v = d.get(key, ())
    if not isinstance(v, (list, tuple)) or any(type(s) is not str for s in v):
        raise ProtocolError(f"result field {key!r} is not a list of strings")
    return tuple(v)


def _ints(d: Mapping[str, Any], key: str) -> Tuple[int, ...]:
    v = d.get(key, ())
    if not isinstance(v, (list, tuple)) or any(type(n) is not int for n in v):
        raise ProtocolError(f"result field {key!r} is not a list of integers")
    return tuple(v)


def _int_or_none(d: Mapping[str, Any], key: str) -> Optional[int]:
    """A field that is always there, an integer or null (history's current)."""
    if key not in d:
        raise ProtocolError(f"result field {key!r} is missing")
    return None if d[key] is None else _int(d, key)


def _time(d: Mapping[str, Any], key: str) -> datetime:
    return parse_time(_str(d, key))


def _opt_time(d: Mapping[str, Any], key: str) -> Optional[datetime]:
    return None if d.get(key) is None else _time(d, key)


@dataclass
class Policy:
    """A PDP's verdict, on a response (success or error) and its event."""

    allow: bool
    reason: str = ""
    obligations: Tuple[str, ...] = ()
    degraded: bool = False  # the PDP gave no verdict; allow_on_error let the op run


def read_policy(v: Any) -> Optional[Policy]:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise ProtocolError("field 'policy' is not an object")
    reason = v.get("reason", "")
    if type(reason) is not str:
        raise ProtocolError("policy field 'reason' is not a string")
    return Policy(_bool(v, "allow"), reason, _strs(v, "obligations"), _bool(v, "degraded", False))


def _opt_str(d: Mapping[str, Any], key: str) -> Optional[str]:
    return None if d.get(key) is None else _str(d, key)


def _opt_int(d: Mapping[str, Any], key: str) -> Optional[int]:
    return None if d.get(key) is None else _int(d, key)


def _opt_bool(d: Mapping[str, Any], key: str) -> Optional[bool]:
    return None if d.get(key) is None else _bool(d, key)


def _secret(d: Mapping[str, Any], key: str) -> Secret:
    return Secret(_str(d, key))


def _opt_secret(d: Mapping[str, Any], key: str) -> Optional[Secret]:
    return None if d.get(key) is None else _secret(d, key)


def _objs(d: Mapping[str, Any], key: str) -> List[Mapping[str, Any]]:
    v = d.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise ProtocolError(f"result field {key!r} is not a list of objects")
    return v


def _map(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = d.get(key, {})
    if not isinstance(v, dict):
        raise ProtocolError(f"result field {key!r} is not an object")
    return v


def _opt_map(d: Mapping[str, Any], key: str) -> Optional[Mapping[str, Any]]:
    return None if d.get(key) is None else _map(d, key)


def _any(d: Mapping[str, Any], key: str) -> Any:
    return d.get(key)


def read_raw(r: Mapping[str, Any], policy: Optional[Policy]) -> Dict[str, Any]:
    """An op this client has no type for: the result as a dict, with a
    top-level ``value`` wrapped in a Secret, so that printing the dict
    prints no value."""
    out = dict(r)
    if type(out.get("value")) is str:
        out["value"] = Secret(out["value"])
    return out
