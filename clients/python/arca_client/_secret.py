"""Secret: a value that prints as <redacted>."""

from __future__ import annotations

import hmac
import time
from datetime import datetime
from typing import Any, Callable, NoReturn, Optional

from .errors import ValueExpired

REDACTED = "<redacted>"


class Secret:
    """A secret value. It prints as ``<redacted>`` however it is printed
    (``str``, ``repr``, f-strings, ``%``, logging, a dataclass's repr), is
    not picklable and cannot be turned into JSON; :meth:`reveal` is the
    one way to the value, so a grep for ``reveal(`` finds every place that
    handles one.

    Python cannot wipe a str from memory: the value lives as long as the
    Secret and the str it was made of, or until it is dropped at
    ``expires_at``.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            # The type only: the message must not carry what was passed.
            raise TypeError(f"a Secret holds a str, not {type(value).__name__}")
        object.__setattr__(self, "_value", value)

    def reveal(self) -> str:
        """The value itself. One got under a grant is dropped at
        ``expires_at``: past it this raises ValueExpired; fetch it again."""
        return self._value

    @property
    def expires_at(self) -> Optional[datetime]:
        """When the value is dropped (the end of the grant it was got
        under), or None when never."""
        return None

    def __repr__(self) -> str:
        return REDACTED

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(REDACTED, spec)

    def __eq__(self, other: object) -> bool:
        # Constant time, so comparing does not tell how much matched.
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self.reveal().encode("utf-8", "surrogatepass"), other.reveal().encode("utf-8", "surrogatepass"))

    # A hash would be a cheap oracle of the value; and a Secret is no key.
    __hash__ = None  # type: ignore[assignment]

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("a Secret cannot be changed")

    def __reduce_ex__(self, protocol: object) -> NoReturn:
        # pickle, copy and shelve all go through here: a pickle is a
        # file or a socket away from the value.
        raise TypeError("a Secret cannot be pickled")

    def __copy__(self) -> Secret:
        return self  # immutable: a copy is the same value

    def __deepcopy__(self, memo: object) -> Secret:
        return self


class _Expiring(Secret):
    """A Secret got under a grant: dropped at expires_at, read on clock."""

    __slots__ = ("_expires", "_clock")

    def __init__(self, value: str, expires_at: datetime, clock: Callable[[], float]) -> None:
        super().__init__(value)
        object.__setattr__(self, "_expires", expires_at)
        object.__setattr__(self, "_clock", clock)

    def reveal(self) -> str:
        if self._value is None or self._clock() >= self._expires.timestamp():
            object.__setattr__(self, "_value", None)  # dropped, for good
            raise ValueExpired()
        return self._value

    @property
    def expires_at(self) -> Optional[datetime]:
        return self._expires


def expiring(value: str, expires_at: datetime, clock: Callable[[], float] = time.time) -> Secret:
    """A Secret of value that is dropped at expires_at, read on clock
    (seconds since the epoch): reveal() raises ValueExpired from then."""
    return _Expiring(value, expires_at, clock)


def as_value(v: str | Secret) -> str:
    """The str to send for a value given as a str or a Secret."""
    if isinstance(v, Secret):
        return v.reveal()
    if isinstance(v, str):
        return v
    raise TypeError(f"a value is a str or a Secret, not {type(v).__name__}")
