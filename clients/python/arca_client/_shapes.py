"""The request fields that are not strings, made into the shapes the
request schema gives them before a line is written: an array of strings
(exec's ``args``, proxy's ``services``), an object of strings (http's
``headers``), an object of strings or arrays of strings (http's
``query``), an object of integers (approve's ``scope``), an integer
(``version``, ``if_version``) and an array of integers (destroy's
``versions``). _request.fields calls these; _wire.encode_body writes what
they return (a tuple, a dict). The errors name the field, never an entry
of it."""

from __future__ import annotations

from typing import Dict, Mapping, Sequence, Tuple, Union

Strings = Tuple[str, ...]


class Count(int):
    """An int a field of integers was given, checked: what _wire writes
    as a number. A plain int given for another field is refused there."""


Counts = Tuple[Count, ...]
Field = Union[None, str, bool, Count, Strings, Counts, Dict[str, Union[str, Strings]], Dict[str, int]]


def strings(name: str, v: Sequence[str]) -> Strings:
    """v, a list or tuple of str, as a tuple."""
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"field {name!r} must be a list or tuple of str, not {type(v).__name__}")
    out = tuple(v)
    for s in out:
        if type(s) is not str:
            raise TypeError(f"field {name!r} must hold str only, not {type(s).__name__}")
    return out


def string_map(name: str, v: Mapping[str, str]) -> Dict[str, str]:
    """v, a mapping of str to str, as a dict."""
    if not isinstance(v, Mapping):
        raise TypeError(f"field {name!r} must be a mapping of str to str, not {type(v).__name__}")
    out: Dict[str, str] = {}
    for k, x in v.items():
        if type(k) is not str or type(x) is not str:
            raise TypeError(f"field {name!r} must map str to str")
        out[k] = x
    return out


def strings_map(name: str, v: Mapping[str, Union[str, Sequence[str]]]) -> Dict[str, Union[str, Strings]]:
    """v, a mapping of str to a str or a list or tuple of str, as a dict."""
    if not isinstance(v, Mapping):
        raise TypeError(f"field {name!r} must be a mapping of str to str or lists of str, not {type(v).__name__}")
    out: Dict[str, Union[str, Strings]] = {}
    for k, x in v.items():
        if type(k) is not str:
            raise TypeError(f"field {name!r} must have str keys")
        out[k] = x if type(x) is str else strings(name, x)
    return out


def int_map(name: str, v: Mapping[str, int]) -> Dict[str, int]:
    """v, a mapping of str to int, as a dict in key order."""
    if not isinstance(v, Mapping):
        raise TypeError(f"field {name!r} must be a mapping of str to int, not {type(v).__name__}")
    out: Dict[str, int] = {}
    for k in sorted(v, key=lambda k: (type(k) is not str, str(k))):
        if type(k) is not str or type(v[k]) is not int:
            raise TypeError(f"field {name!r} must map str to int")
        out[k] = v[k]
    return out


def integer(name: str, v: int) -> Count:
    """v, an int of 0 or more (not a bool), as a Count."""
    if type(v) is not int:
        raise TypeError(f"field {name!r} must be an int, not {type(v).__name__}")
    if v < 0:
        raise ValueError(f"field {name!r} must be 0 or more")
    return Count(v)


def integers(name: str, v: Sequence[int]) -> Counts:
    """v, a list or tuple of ints of 0 or more, as a tuple of Counts."""
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"field {name!r} must be a list or tuple of int, not {type(v).__name__}")
    return tuple(integer(name, n) for n in v)
