"""A client of ``arca serve`` for embedders, standard library only.

    from arca_client import Client

    with Client.start("arca", environ={"HOME": home, "PATH": path}) as arca:
        db = arca.get("arca://app/db").value      # a Secret: prints <redacted>
        connect(password=db.reveal())

See the README for the rules: an absent capability is unknown, unknown
fields are ignored, a timed-out call keeps its slot.
"""

from ._secret import Secret
from ._wire import MAX_RESPONSE_LINE
from .client import PROTOCOL, Client
from .errors import (Approval, ApprovalDenied, ApprovalRequired, ArcaError, ClientError, ClosedError, Conflict,
                     ProtocolError, StartError, StreamError, ValueExpired)
from .events import MAX_EVENT_LINE, Event
from .scrub import ScrubWriter
from .results import (CheckResult, ExecRedaction, ExecResult, ExecTruncated, GetResult, HttpRedaction, HttpResult,
                      ListRecord, ListResult, ManifestOp, ManifestResult, Policy, ProxyResult, PutResult, RmResult,
                      RotateResult, ApprovalState, RevokeResult, HistoryResult, HistoryVersion, RollbackResult,
                      UndeleteResult, DestroyResult, ChangesResult, ChangesChange)

# The names the results had before they were generated from the schemas.
Got, Put, Rotated, Removed = GetResult, PutResult, RotateResult, RmResult
Listed, Record, Checked, Manifest, OpInfo = ListResult, ListRecord, CheckResult, ManifestResult, ManifestOp

# The major version is the protocol's: arca-client 1.x speaks arca-serve/1.
__version__ = "1.0.0"

__all__ = [
    "PROTOCOL", "MAX_RESPONSE_LINE", "MAX_EVENT_LINE", "Client", "Secret",
    "ClientError", "ArcaError", "ClosedError", "StartError", "ProtocolError", "StreamError",
    "Approval", "ApprovalRequired", "ApprovalDenied", "ValueExpired", "ApprovalState", "RevokeResult",
    "Event", "Policy", "Got", "Put", "Rotated", "Removed", "Listed", "Record", "Checked", "Manifest", "OpInfo",
    "GetResult", "PutResult", "RotateResult", "RmResult", "ListResult", "ListRecord", "CheckResult",
    "ManifestResult", "ManifestOp", "ScrubWriter",
    "HttpResult", "HttpRedaction", "ExecResult", "ExecRedaction", "ExecTruncated", "ProxyResult",
    "Conflict", "HistoryResult", "HistoryVersion", "RollbackResult", "UndeleteResult", "DestroyResult",
    "ChangesResult", "ChangesChange",
]
