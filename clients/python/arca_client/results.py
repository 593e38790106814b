"""The typed results of the ops, and how they are read off the wire.

Readers take the fields they know and ignore the rest: the protocol lets a
server add fields to responses, results and events, so an unknown field is
never an error. A field the protocol says is always there and is not (or
has the wrong type) is a ProtocolError naming the field, never quoting the
value.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Mapping, NoReturn, Optional, Tuple

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


@dataclass
class Record:
    """A row of list: a record's metadata, never its value."""

    ref: str
    version: int
    created_at: datetime
    updated_at: datetime
    rotated_at: Optional[datetime] = None  # None until the record is rotated


@dataclass
class Got:
    """The result of get. ``value`` prints as <redacted>."""

    ref: str
    env: str
    value: Secret
    version: int
    created_at: datetime
    updated_at: datetime
    rotated_at: Optional[datetime] = None
    policy: Optional[Policy] = None


@dataclass
class Put:
    """The result of put."""

    ref: str
    env: str
    version: int
    created: bool  # the record did not exist before
    created_at: datetime
    updated_at: datetime
    policy: Optional[Policy] = None


@dataclass
class Rotated:
    """The result of rotate."""

    ref: str
    env: str
    version: int
    created_at: datetime
    updated_at: datetime
    rotated_at: Optional[datetime] = None  # the protocol sets it; kept optional like everywhere
    policy: Optional[Policy] = None


@dataclass
class Removed:
    """The result of rm: ``version`` is the one the record had."""

    ref: str
    env: str
    version: int
    removed: bool = True
    policy: Optional[Policy] = None


@dataclass
class Listed:
    """The result of list. Check ``truncated``: past 10,000 rows the list
    is not the whole env."""

    env: str
    records: Tuple[Record, ...]
    truncated: bool
    omitted: int
    policy: Optional[Policy] = None


@dataclass
class Checked:
    """The result of check: a check that finds problems still succeeds."""

    env: str
    vault: str
    kind: str
    healthy: bool
    records: int
    problems: Tuple[str, ...]
    info: Tuple[str, ...] = ()
    policy: Optional[Policy] = None


@dataclass
class OpInfo:
    """An op as the manifest lists it."""

    name: str
    required: Tuple[str, ...] = ()
    optional: Tuple[str, ...] = ()
    consults_pdp: bool = False
    meta: bool = False


@dataclass
class Manifest:
    """What the manifest says of the protocol and the process.

    ``capabilities`` is the server's object as it sent it, or None from a
    server that predates it. A capability that is not there is unknown,
    never false: use :meth:`capability`, which says None for unknown.
    """

    protocol: str
    version: str
    ops: Tuple[OpInfo, ...] = ()
    error_codes: Tuple[str, ...] = ()
    limits: Mapping[str, int] = field(default_factory=dict)
    cli_only: Tuple[str, ...] = ()
    envs: Tuple[str, ...] = ()
    default_env: str = ""
    pdp_configured: bool = False
    capabilities: Optional[Mapping[str, Any]] = None
    schemas: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def capability(self, name: str) -> Any:
        """The capability's value, or None when the server does not say
        (unknown: it may predate the capability)."""
        return None if self.capabilities is None else self.capabilities.get(name)


def _records(r: Mapping[str, Any]) -> Tuple[Record, ...]:
    rows = r.get("records")
    if not isinstance(rows, list) or not all(isinstance(x, dict) for x in rows):
        raise ProtocolError("result field 'records' is not a list of objects")
    return tuple(Record(_str(x, "ref"), _int(x, "version"), _time(x, "created_at"), _time(x, "updated_at"),
                        _opt_time(x, "rotated_at")) for x in rows)


def read_get(r: Mapping[str, Any], policy: Optional[Policy]) -> Got:
    # The hot path of every embedder: the checks inline, the helpers
    # only to name what is wrong.
    ref, env, v, version = r.get("ref"), r.get("env"), r.get("value"), r.get("version")
    created, updated, rotated = r.get("created_at"), r.get("updated_at"), r.get("rotated_at")
    if not (type(ref) is str and type(env) is str and type(v) is str and type(version) is int
            and type(created) is str and type(updated) is str and (rotated is None or type(rotated) is str)):
        _bad_get(r)
    return Got(ref, env, Secret(v), version, parse_time(created), parse_time(updated),
               None if rotated is None else parse_time(rotated), policy)


def _bad_get(r: Mapping[str, Any]) -> NoReturn:
    """Name the field of a get result that is not as the protocol says."""
    for key in ("ref", "env", "value", "created_at", "updated_at"):
        _str(r, key)
    _int(r, "version")
    _opt_time(r, "rotated_at")
    raise ProtocolError("a get result that is not as the protocol says")


def read_put(r: Mapping[str, Any], policy: Optional[Policy]) -> Put:
    return Put(_str(r, "ref"), _str(r, "env"), _int(r, "version"), _bool(r, "created"), _time(r, "created_at"),
               _time(r, "updated_at"), policy)


def read_rotate(r: Mapping[str, Any], policy: Optional[Policy]) -> Rotated:
    return Rotated(_str(r, "ref"), _str(r, "env"), _int(r, "version"), _time(r, "created_at"),
                   _time(r, "updated_at"), _opt_time(r, "rotated_at"), policy)


def read_rm(r: Mapping[str, Any], policy: Optional[Policy]) -> Removed:
    return Removed(_str(r, "ref"), _str(r, "env"), _int(r, "version"), _bool(r, "removed", True), policy)


def read_list(r: Mapping[str, Any], policy: Optional[Policy]) -> Listed:
    return Listed(_str(r, "env"), _records(r), _bool(r, "truncated"), _int(r, "omitted"), policy)


def read_check(r: Mapping[str, Any], policy: Optional[Policy]) -> Checked:
    return Checked(_str(r, "env"), _str(r, "vault"), _str(r, "kind"), _bool(r, "healthy"), _int(r, "records"),
                   _strs(r, "problems"), _strs(r, "info"), policy)


def read_manifest(r: Mapping[str, Any], policy: Optional[Policy]) -> Manifest:
    ops = r.get("ops", [])
    if not isinstance(ops, list) or not all(isinstance(o, dict) for o in ops):
        raise ProtocolError("result field 'ops' is not a list of objects")
    limits = r.get("limits", {})
    caps = r.get("capabilities")
    schemas = r.get("schemas", {})
    default_env = r.get("default_env")
    if not isinstance(limits, dict) or not isinstance(schemas, dict) or not (caps is None or isinstance(caps, dict)):
        raise ProtocolError("result field 'limits', 'schemas' or 'capabilities' is not an object")
    return Manifest(
        protocol=_str(r, "protocol"), version=_str(r, "version"),
        ops=tuple(OpInfo(_str(o, "name"), _strs(o, "required"), _strs(o, "optional"),
                         _bool(o, "consults_pdp", False), _bool(o, "meta", False)) for o in ops),
        error_codes=_strs(r, "error_codes"), limits=limits, cli_only=_strs(r, "cli_only"), envs=_strs(r, "envs"),
        default_env=default_env if isinstance(default_env, str) else "",
        pdp_configured=_bool(r, "pdp_configured", False), capabilities=caps, schemas=schemas)


def read_shutdown(r: Mapping[str, Any], policy: Optional[Policy]) -> None:
    return None


def read_raw(r: Mapping[str, Any], policy: Optional[Policy]) -> Dict[str, Any]:
    """An op this client has no type for: the result as a dict, with a
    top-level ``value`` wrapped in a Secret, so that printing the dict
    prints no value."""
    out = dict(r)
    if type(out.get("value")) is str:
        out["value"] = Secret(out["value"])
    return out
