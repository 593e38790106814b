"""A stand-in for arca serve that breaks the protocol on purpose, so the
tests can see what the client does with what a real serve never writes.

    fake_serve.py MODE [serve's own arguments, ignored]

Every mode writes a start event (unless it says otherwise) and answers the
manifest as arca-serve/1 would; then, for the requests after it:

    protocol2      the manifest says arca-serve/2
    extra          responses, results, errors and events carry fields this
                   client does not know; the manifest has capabilities
    long-response  a response line over 8 MiB
    long-event     an event line over 4 MiB
    wrong-id       a response that echoes another id
    stray          two responses to one request
    malformed      a get result whose version is not a number
    not-json       a response line cut short: not JSON
    null-id        a get of arca://app/unreadable is answered as serve answers
                   a line it cannot read (id null, bad_request); one of
                   arca://app/null-ok with id null and a success
    gated          a get of arca://app/missing is not_found; one of
                   arca://app/gated is answered once the file $FAKE_GATE
                   exists
    broken-chain   events with a seq gap, then a broken link
    no-chain       events with no prev, from a server without capabilities
    drop-chain     events with prev, then one without
    unlinked       events with no prev after the manifest promised the chain
    silent         nothing at all (no start event), then sleeps
    no-start       exits at once
    junk           a line that is not an event instead of the start event
    uses           each request line is appended to the file $FAKE_LOG; http,
                   exec and proxy get a result of their shape, and a service
                   or action named "down" upstream_failed with cause connect
    approvals      each request line is appended to the file $FAKE_LOG; a get
                   with no approval is answered approval_required (APPROVAL),
                   one with it succeeds; each approval op gets the next state
                   of the file $FAKE_STATES; approve and revoke a result of
                   their shape

$FAKE_PIDFILE, when set, receives the process id. $FAKE_VALUE is the value
a get returns (a canary, in the tests).
"""

import hashlib
import json
import os
import sys
import time

MODE = sys.argv[1]
VALUE = os.environ.get("FAKE_VALUE", "fake-value")
T = "2026-11-30T08:14:14.381353202Z"
state = {"seq": 0, "prev": "", "link": MODE != "no-chain"}


def emit(fields):
    state["seq"] += 1
    e = {"v": 1, "ts": T, "seq": state["seq"], **fields, "source": "serve"}
    if state["prev"] and state["link"]:
        e["prev"] = state["prev"]
    line = json.dumps(e, separators=(",", ":")).encode()
    state["prev"] = hashlib.sha256(line).hexdigest()
    sys.stderr.buffer.write(line + b"\n")
    sys.stderr.buffer.flush()


def respond(obj):
    sys.stdout.buffer.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    sys.stdout.buffer.flush()


def manifest(rid):
    result = {"protocol": "arca-serve/2" if MODE == "protocol2" else "arca-serve/1", "version": "0.0.0",
              "ops": [{"name": "get", "required": ["op", "ref"], "optional": ["id"], "consults_pdp": True,
                       "meta": False}],
              "error_codes": [], "limits": {}, "cli_only": [], "envs": ["default"], "default_env": "default",
              "pdp_configured": False, "schemas": {}}
    if MODE == "unlinked":
        result["capabilities"] = {"audit_chain": {"field": "prev", "hash": "sha256"}}
        state["link"] = False  # what follows breaks the promise
    if MODE == "extra":
        result["capabilities"] = {"batch": True}
        result["a_field_from_the_future"] = {"x": 1}
    respond({"id": rid, "ok": True, "result": result})


def get(rid, ref):
    result = {"ref": ref or "arca://app/db", "env": "default", "value": VALUE, "version": 1,
              "created_at": T, "updated_at": T}
    if MODE == "malformed":
        result["version"] = "one"
    if MODE == "extra":
        result["etag"] = "abc"
        respond({"id": rid, "ok": True, "result": result, "trace": "t-1"})
        return
    if MODE == "wrong-id":
        rid = rid + 100
    if MODE == "gated" and ref == "arca://app/missing":
        respond({"id": rid, "ok": False, "error": {"code": "not_found", "message": "no record arca://app/missing"}})
        return
    if MODE == "gated" and ref == "arca://app/gated":
        for _ in range(3000):  # 30 s at most: a test that never opens the gate still ends
            if os.path.exists(os.environ["FAKE_GATE"]):
                break
            time.sleep(0.01)
    if MODE == "null-id" and ref == "arca://app/unreadable":
        respond({"id": None, "ok": False, "error": {"code": "bad_request",
                                                    "message": "request is not valid JSON (at byte 59)"}})
        return
    if MODE == "null-id" and ref == "arca://app/null-ok":
        rid = None
    if MODE == "not-json":
        sys.stdout.buffer.write(b'{"id":%d,"ok":true,"result":{"value":"%s"\n' % (rid, VALUE.encode()))
        sys.stdout.buffer.flush()
        return
    respond({"id": rid, "ok": True, "result": result})
    if MODE == "stray":
        respond({"id": rid, "ok": True, "result": result})


USES = {
    "http": {"service": "echo", "status": 503, "headers": {"Content-Type": ["text/plain"]}, "body": "down",
             "truncated": False, "redactions": [{"ref": "arca://app/token", "count": 1}], "elapsed_ms": 7},
    "exec": {"action": "hello", "exit_code": 0, "signal": "", "stdout": "hi", "stderr": "",
             "truncated": {"stdout": False, "stderr": True}, "redactions": [], "elapsed_ms": 2},
    "proxy": {"base_urls": {"echo": "http://127.0.0.1:4000/echo"}, "token": "t0k", "expires_at": T},
}


def use(rid, req, raw):
    with open(os.environ["FAKE_LOG"], "ab") as f:
        f.write(raw)
    if "down" in (req.get("service"), req.get("action")):
        respond({"id": rid, "ok": False, "error": {"code": "upstream_failed", "message": "connect: refused",
                                                   "details": {"cause": "connect"}}})
    elif req.get("op") == "proxy" and req.get("stop"):
        respond({"id": rid, "ok": True, "result": {"stopped": True}})
    else:
        respond({"id": rid, "ok": True, "result": USES[req["op"]], "policy": {"allow": True}})


APPROVAL = {"id": "ap_2e2e07a12d71a020ed599842a201b06d",
            "summary": "a caller that names no actor asks to get app/db in env default",
            "fingerprint": "4553c33cc7709cb9af3514ab7ab5bb5f8699bd0971eb149e0f2998dd840c8108",
            "expires_at": "2099-01-01T00:15:00.000000000Z",
            "url": "http://127.0.0.1:7777/approvals/ap_2e2e07a12d71a020ed599842a201b06d"}


def approvals(rid, req, raw):
    with open(os.environ["FAKE_LOG"], "ab") as f:
        f.write(raw)
    op = req.get("op")
    if op == "approval":
        with open(os.environ["FAKE_STATES"]) as f:
            states = f.read().splitlines()
        with open(os.environ["FAKE_STATES"], "w") as f:
            f.write("".join(s + "\n" for s in states[1:]))
        respond({"id": rid, "ok": True, "result": {"approval": APPROVAL["id"], "state": states[0] if states else ""}})
    elif op == "approve":
        respond({"id": rid, "ok": True, "result": {"approval": APPROVAL["id"], "state": "approved"}})
    elif op == "revoke":
        respond({"id": rid, "ok": True, "result": {"revoked": 0}})
    elif "approval" in req:
        get(rid, req.get("ref"))
    else:
        respond({"id": rid, "ok": False, "error": {"code": "approval_required",
                                                   "message": "approval required: " + APPROVAL["summary"],
                                                   "details": {"approval": APPROVAL}},
                 "policy": {"allow": False, "reason": "prod", "obligations": ["arca:approval"]}})


def main():
    if os.environ.get("FAKE_PIDFILE"):
        with open(os.environ["FAKE_PIDFILE"], "w") as f:
            f.write(str(os.getpid()))
    if MODE == "no-start":
        return
    if MODE == "silent":
        time.sleep(60)
        return
    if MODE == "junk":
        sys.stderr.write("flag provided but not defined: -x\n")
        return
    emit({"event": "start", "message": "fake serving arca-serve/1"})
    for raw in sys.stdin.buffer:
        req = json.loads(raw)
        rid, op = req.get("id"), req.get("op")
        if MODE == "long-event" and op != "manifest":
            emit({"event": op, "op": op, "outcome": "ok", "id": rid, "message": "x" * (5 << 20)})
        elif MODE == "drop-chain" and op != "manifest":
            state["link"] = False
            emit({"event": op, "op": op, "outcome": "ok", "id": rid})
            state["link"] = True
        elif MODE == "broken-chain" and op != "manifest":
            state["seq"] += 1  # a gap
            emit({"event": op, "op": op, "outcome": "ok", "id": rid})
            state["prev"] = "0" * 64  # a broken link
            emit({"event": "warning", "message": "after a broken link"})
        else:
            extra = {"from_the_future": True} if MODE == "extra" else {}
            emit({"event": op, "op": op, "outcome": "ok", "id": rid, **extra})
        if op == "manifest":
            manifest(rid)
        elif MODE == "uses":
            use(rid, req, raw)
        elif MODE == "approvals":
            approvals(rid, req, raw)
        elif MODE == "long-response":
            sys.stdout.buffer.write(b'{"id":%d,"ok":true,"result":{"pad":"' % rid + b"x" * (9 << 20) + b'"}}\n')
            sys.stdout.buffer.flush()
        elif MODE == "extra" and op == "rm":
            respond({"id": rid, "ok": False, "error": {"code": "a_future_code", "message": "m", "hint": "h"}})
        else:
            get(rid, req.get("ref"))
    emit({"event": "stop", "message": "eof"})


main()
