"""The errors a call can raise. None of them ever holds a secret value:
their messages are built from serve's error code and message (which never
carry one) or from the client's own text, never from a response's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._read import Policy


class ClientError(Exception):
    """The base of every error this package raises."""


class ArcaError(ClientError):
    """A request serve refused or failed.

    ``code`` is the wire's error code (``bad_request``, ``unknown_op``,
    ``denied``, ``pdp_unreachable``, ``not_found``, ``op_error``,
    ``upstream_failed``, ``approval_required`` (an ApprovalRequired),
    ``conflict`` (a Conflict), or one a later server adds): branch on it, never on ``message``. ``policy`` is the PDP's verdict when serve consulted
    one, else None. ``cause`` is the ``details.cause`` of the error when
    it has one (``upstream_failed``: the step of the use that failed,
    ``dns``, ``connect``, ``tls``, ``timeout``, ``blocked_address``,
    ``redirect``, ``read`` or ``start``; ``denied``: the grant or approval
    rule that denied it, ``grant_exhausted``, ``grant_expired``,
    ``approval_mismatch``, ``approval_unknown``, ``approval_denied``,
    ``approval_expired`` or ``approvals_full``), else None. From
    ``resolve``, ``variable`` and ``ref`` are the name and ref whose get
    failed, and the text names them first, as the Go client's does
    (``B (arca://app/missing): arca serve: not_found: ...``); else None.
    """

    def __init__(self, code: str, message: str, policy: Optional[Policy] = None, *,
                 variable: Optional[str] = None, ref: Optional[str] = None, cause: Optional[str] = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.policy = policy
        self.cause = cause
        self.variable = variable
        self.ref = ref

    def __str__(self) -> str:
        text = f"arca serve: {self.code}: {self.message}"
        return text if self.variable is None else f"{self.variable} ({self.ref}): {text}"

    def __repr__(self) -> str:
        named = "" if self.variable is None else f", variable={self.variable!r}, ref={self.ref!r}"
        cause = "" if self.cause is None else f", cause={self.cause!r}"
        return f"ArcaError(code={self.code!r}, message={self.message!r}, policy={self.policy!r}{cause}{named})"


@dataclass(frozen=True)
class Approval:
    """An approval serve asked for (``details.approval`` of
    ``approval_required``): ``summary`` says what is asked, in words, never
    a value; ``fingerprint`` is a SHA-256 over actor, op, env, ref and use;
    ``expires_at`` is when it expires (a deny) unless decided; ``url`` the
    approval page's, None when serve runs none."""

    id: str
    summary: str
    fingerprint: str
    expires_at: datetime
    url: Optional[str] = None


class ApprovalRequired(ArcaError):
    """The ArcaError of a request a human must approve first (code
    ``approval_required``): ``approval`` names it. Retry the request with
    ``approval=approval.id`` once it is approved; ``Client.with_approval``
    does all of it."""

    def __init__(self, message: str, policy: Optional[Policy], approval: Approval, *,
                 variable: Optional[str] = None, ref: Optional[str] = None) -> None:
        super().__init__("approval_required", message, policy, variable=variable, ref=ref)
        self.approval = approval

    def __repr__(self) -> str:
        return f"ApprovalRequired(message={self.message!r}, policy={self.policy!r}, approval={self.approval!r})"


class Conflict(ArcaError):
    """The ArcaError of a write whose ``if_version`` is not the name's
    current version (code ``conflict``): nothing was written.
    ``current_version`` is the version that is current (0: none, the name
    is not stored or is soft-deleted). Read again, and write again with
    ``if_version`` of what was read: a compare-and-set (the README shows
    the loop)."""

    def __init__(self, message: str, policy: Optional[Policy], current_version: int, *,
                 variable: Optional[str] = None, ref: Optional[str] = None) -> None:
        super().__init__("conflict", message, policy, variable=variable, ref=ref)
        self.current_version = current_version

    def __repr__(self) -> str:
        return f"Conflict(message={self.message!r}, policy={self.policy!r}, current_version={self.current_version!r})"


class ApprovalDenied(ClientError):
    """What ``Client.with_approval`` raises when the approval it waited for
    was denied or expired: ``state`` says which."""

    def __init__(self, approval: Approval, state: str) -> None:
        super().__init__(f"approval {approval.id} was {state}")
        self.approval = approval
        self.state = state


class ValueExpired(ClientError):
    """``reveal()`` of a value past the end of the grant it was got under
    (its result's ``expires_at``): the value was dropped; fetch it again."""

    def __init__(self) -> None:
        super().__init__("the value's grant has ended: fetch it again")


class ClosedError(ClientError):
    """A call made, or in flight, when serve is gone: it exited, was
    killed, was closed, or the client stopped reading it because its wire
    broke (``reason`` says which). From ``resolve``, ``variable`` and
    ``ref`` name the get that failed, as ArcaError's do."""

    def __init__(self, reason: str = "arca serve is gone", *, variable: Optional[str] = None,
                 ref: Optional[str] = None) -> None:
        super().__init__(reason if variable is None else f"{variable} ({ref}): {reason}")
        self.reason = reason
        self.variable = variable
        self.ref = ref


class StartError(ClientError):
    """serve did not become ready. ``stop_message`` is serve's own word
    (its ``stop`` event's message, e.g. ``cannot start: config ... does
    not exist``) when it gave one, else None."""

    def __init__(self, text: str, stop_message: Optional[str] = None) -> None:
        super().__init__(text)
        self.stop_message = stop_message


class ProtocolError(ClientError):
    """serve said something this client cannot take: another protocol, or
    a response or result that is not what the protocol says."""


class StreamError(ClientError):
    """What is wrong with an audit event, handed to ``on_event`` beside it:
    a line that is not an event, a gap in ``seq``, a broken chain, a line
    over the cap."""
