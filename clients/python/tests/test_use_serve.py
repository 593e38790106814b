"""The uses against a real serve: a service on a local HTTP server that
echoes what it receives, a service on a port nothing listens on, and an
action that prints the credential."""

from __future__ import annotations

import json
import threading
import unittest
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from arca_client import ArcaError, Client

from .support import Home

HANG = 30.0
TOKEN = "tok-3f9a7c1e-canary"


class Echo(BaseHTTPRequestHandler):
    """Answers every request with what it received, as JSON: the credential
    serve injects comes back in the body, for scrub."""

    def answer(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({"method": self.command, "url": self.path, "authorization": self.headers.get("Authorization"),
                           "test": self.headers.get("X-Test"), "body": self.rfile.read(n).decode()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer

    def log_message(self, *args: object) -> None:
        pass


CONFIG = """[services.echo]
base_url = "http://127.0.0.1:{port}"
credential = "arca://app/token"
auth = "bearer"
methods = ["GET", "POST"]
paths = ["/*"]
allow_private = true

[services.down]
base_url = "http://127.0.0.1:1"
credential = "arca://app/token"
auth = "bearer"
paths = ["/*"]
allow_private = true

[actions.hello]
argv = ["sh", "-c", "printf '%s:%s' \\"$TOKEN\\" \\"$1\\"", "hello"]
args = "^[a-z]+$"
env = {{ TOKEN = "arca://app/token" }}
"""


class UseServeTest(unittest.TestCase):
    def setUp(self) -> None:
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        self.home = Home(CONFIG.format(port=srv.server_address[1]))
        self.addCleanup(self.home.cleanup)
        self.home.arca("--config", self.home.config, "put", "arca://app/token", stdin=TOKEN)
        self.c: Client = self.home.start()
        self.addCleanup(self.c.close)

    def test_http(self) -> None:
        h = self.c.http("echo", "POST", "/repos/x", query={"q": ["1", "2"], "r": "x"}, headers={"X-Test": "y"},
                        body="hello", timeout=HANG)
        self.assertEqual((h.service, h.status, h.truncated), ("echo", 200, False))
        self.assertNotIn(TOKEN, repr(h))
        self.assertEqual([(x.ref, x.count) for x in h.redactions], [("arca://app/token", 1)])
        self.assertEqual(json.loads(h.body or ""), {"method": "POST", "url": "/repos/x?q=1&q=2&r=x",
                                                   "authorization": "Bearer <redacted:app/token>", "test": "y",
                                                   "body": "hello"})
        self.assertEqual(h.header("Content-Type"), ["application/json"])
        with self.assertRaises(ArcaError) as cm:
            self.c.http("down", "GET", "/", timeout=HANG)
        self.assertEqual((cm.exception.code, cm.exception.cause), ("upstream_failed", "connect"))
        with self.assertRaises(ArcaError) as cm:
            self.c.http("nope", "GET", "/", timeout=HANG)
        self.assertEqual((cm.exception.code, cm.exception.cause), ("bad_request", None))

    def test_exec(self) -> None:
        x = self.c.exec("hello", args=["abc"], timeout=HANG)
        self.assertEqual((x.action, x.exit_code, x.stdout), ("hello", 0, "<redacted:app/token>:abc"))
        self.assertEqual((x.truncated.stdout, x.truncated.stderr), (False, False))
        self.assertEqual([(r.ref, r.count) for r in x.redactions], [("arca://app/token", 1)])
        with self.assertRaises(ArcaError) as cm:
            self.c.exec("hello", args=["ABC"], timeout=HANG)
        self.assertEqual(cm.exception.code, "bad_request")

    def test_proxy(self) -> None:
        p = self.c.proxy(services=["echo"], timeout=HANG)
        self.assertIsNotNone(p.base_urls)
        self.assertIsNotNone(p.token)
        url = (p.base_urls or {})["echo"].rstrip("/") + "/repos/x"
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy from the environment
        with self.assertRaises(urllib.error.HTTPError) as cm:
            direct.open(url, timeout=HANG)
        self.assertEqual(cm.exception.code, 401)
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {p.token}"})
        with direct.open(req, timeout=HANG) as r:
            echoed = json.loads(r.read())
        self.assertEqual((echoed["url"], echoed["authorization"]), ("/repos/x", "Bearer <redacted:app/token>"))
        self.assertTrue(self.c.proxy(stop=True, timeout=HANG).stopped)
        with self.assertRaises(OSError):
            direct.open(req, timeout=HANG)


if __name__ == "__main__":
    unittest.main()
